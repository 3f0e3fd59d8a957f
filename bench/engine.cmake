# engine_bench (issue 11): front-end sets, durable writes (sync none /
# fdatasync, file cache off / on), stream latency, on Wheel and Classic, and
# the 4 KiB append + fdatasync floor, in one run.
if(TARGET kvexec_engine)
    add_executable(engine_bench ${CMAKE_CURRENT_LIST_DIR}/engine_bench.cc
                                ${CMAKE_CURRENT_LIST_DIR}/executor/parallel_run.cc)
    target_include_directories(engine_bench PRIVATE ${CMAKE_CURRENT_LIST_DIR})
    target_link_libraries(engine_bench PRIVATE kvexec benchmark::benchmark kvexec_warnings)
endif()
