# kvexec_add_component(NAME SOURCES...): an OBJECT library kvexec_<NAME>
# with the project's include paths and warnings; the top level folds its
# objects into the kvexec library.
function(kvexec_add_component name)
    add_library(kvexec_${name} OBJECT ${ARGN})
    target_include_directories(kvexec_${name}
        PUBLIC ${PROJECT_SOURCE_DIR}/include
        PRIVATE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(kvexec_${name} PUBLIC Threads::Threads PRIVATE kvexec_warnings)
    set_target_properties(kvexec_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
