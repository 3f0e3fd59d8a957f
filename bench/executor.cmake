# bench/executor.cmake: executor_bench, the seeds' executor scenarios for
# every kvexec backend plus peers (Boost.Asio, oneTBB, libevent, a condvar
# pool) in one binary. Included by bench/CMakeLists.txt.
find_package(Boost 1.74 REQUIRED)
find_package(TBB REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(kvexec_libevent REQUIRED IMPORTED_TARGET libevent_core libevent_pthreads)

add_executable(executor_bench
    ${CMAKE_CURRENT_LIST_DIR}/executor_bench.cc
    ${CMAKE_CURRENT_LIST_DIR}/executor/floor.cc
    ${CMAKE_CURRENT_LIST_DIR}/executor/parallel_run.cc
    ${CMAKE_CURRENT_LIST_DIR}/executor/footprint.cc
    ${CMAKE_CURRENT_LIST_DIR}/executor/options.cc
    ${CMAKE_CURRENT_LIST_DIR}/executor/pool_targets.cc
    ${CMAKE_CURRENT_LIST_DIR}/executor/scenarios.cc
    ${CMAKE_CURRENT_LIST_DIR}/peers/asio_peer.cc
    ${CMAKE_CURRENT_LIST_DIR}/peers/condvar_pool.cc
    ${CMAKE_CURRENT_LIST_DIR}/peers/condvar_timers.cc
    ${CMAKE_CURRENT_LIST_DIR}/peers/libevent_peer.cc
    ${CMAKE_CURRENT_LIST_DIR}/peers/tbb_peer.cc)
target_include_directories(executor_bench PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(executor_bench PRIVATE
    kvexec benchmark::benchmark Boost::headers TBB::tbb PkgConfig::kvexec_libevent
    kvexec_warnings)
