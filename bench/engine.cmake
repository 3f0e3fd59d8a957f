# engine_bench (issue 11): front-end sets, durable writes (sync none /
# fdatasync, file cache off / on), stream latency, on Wheel and Classic, and
# the 4 KiB append + fdatasync floor, in one run.
if(TARGET kvexec_engine)
    add_executable(engine_bench ${CMAKE_CURRENT_LIST_DIR}/engine_bench.cc)
    target_link_libraries(engine_bench PRIVATE kvexec benchmark::benchmark kvexec_warnings)
endif()
