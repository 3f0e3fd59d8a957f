# storage_bench (issue 6): saveDocs with the file cache on and off, in one run.
add_executable(storage_bench ${CMAKE_CURRENT_LIST_DIR}/storage_bench.cc)
target_link_libraries(storage_bench PRIVATE kvexec_storage benchmark::benchmark kvexec_warnings)
