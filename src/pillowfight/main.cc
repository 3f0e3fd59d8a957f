// kvexec-pillowfight: a load generator for kvexec-server (and memcached)
// with cbc-pillowfight's options. See `kvexec-pillowfight --help` and the
// README's "Load the server".
#include <event2/thread.h>

#include <csignal>
#include <ctime>
#include <fstream>
#include <iostream>

#include "pillowfight/options.h"
#include "pillowfight/report.h"
#include "pillowfight/run.h"

namespace {

// SIGINT/SIGTERM are blocked in every thread (the mask is inherited) and
// taken synchronously here, so an interrupted run still prints its report.
sigset_t stopSignals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    return set;
}

bool waitForStopSignal(std::chrono::milliseconds wait) {
    const sigset_t set = stopSignals();
    const timespec timeout{static_cast<time_t>(wait.count() / 1000),
                           static_cast<long>(wait.count() % 1000) * 1'000'000};
    return sigtimedwait(&set, nullptr, &timeout) > 0;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace kvexec::pillowfight;
    std::signal(SIGPIPE, SIG_IGN);
    Options options;
    try {
        bool help = false;
        options = parseOptions(std::vector<std::string>(argv + 1, argv + argc), help);
        if (help) {
            std::cout << usage();
            return 0;
        }
    } catch (const std::exception& e) {
        std::cerr << "kvexec-pillowfight: " << e.what() << "\n" << usage();
        return 2;
    }
    const sigset_t signals = stopSignals();
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    try {
        const RunResult result = runPillowfight(options, std::cout, &waitForStopSignal);
        std::cout << formatReport(options, result) << std::flush;
        if (!options.jsonPath.empty()) {
            std::ofstream json(options.jsonPath);
            json << formatJson(options, result) << "\n";
            if (!json) {
                std::cerr << "kvexec-pillowfight: cannot write " << options.jsonPath << "\n";
                return 1;
            }
        }
        const bool failed = result.population.errorCount() + result.load.errorCount() > 0;
        return failed ? 3 : 0;
    } catch (const std::exception& e) {
        std::cerr << "kvexec-pillowfight: " << e.what() << "\n";
        return 1;
    }
}
