# timer_wheel_bench: cost of re-arm, arm+cancel, advance() and nextExpiry()
# of the timing wheel (include/kvexec/timer_wheel.h) at 1k / 30k / 1M armed
# entries (seed 001: one timeout per vBucket, re-armed far more often than it
# fires). Header-only: links Google Benchmark only.
add_executable(timer_wheel_bench ${CMAKE_CURRENT_LIST_DIR}/timer_wheel_bench.cc)
target_include_directories(timer_wheel_bench PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(timer_wheel_bench PRIVATE benchmark::benchmark kvexec_warnings)
