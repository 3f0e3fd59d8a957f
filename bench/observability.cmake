# bench/observability.cmake: observability_bench, the cost of recording
# metrics (PoolConfig::recordMetrics on vs off) on the seeds' OneShot and
# LongLived scenarios, both settings in one binary. Included by
# bench/CMakeLists.txt.
add_executable(observability_bench ${CMAKE_CURRENT_LIST_DIR}/observability_bench.cc)
target_link_libraries(observability_bench PRIVATE kvexec benchmark::benchmark kvexec_warnings)
# RunTask rows call the library's internal runTask() directly.
target_include_directories(observability_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
