// bench/executor/options.cc: parsing of executor_bench's own flags.
#include "executor/options.h"

#include <string_view>

namespace kvexec::bench {

Options parseOptions(int& argc, char** argv) {
    Options options;
    int kept = 1;
    for (int i = 1; i < argc; ++i) {
        if (std::string_view(argv[i]) == "--smoke") {
            options.smoke = true;
        } else {
            argv[kept++] = argv[i];
        }
    }
    argc = kept;
    argv[argc] = nullptr;
    return options;
}

}  // namespace kvexec::bench
