// pillowfight/load_loop.h: one event-loop thread and the clients it runs
// (many connections per thread: the clients are event-driven, not one OS
// thread each).
//
// Thread safety: start() and join() from the thread that owns the
// LoadLoop (main); between them the loop's thread alone touches its
// event_base and Connections. It returns once every client has finished.
#pragma once

#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include "pillowfight/run_state.h"
#include "pillowfight/workload.h"

namespace kvexec::pillowfight {

class LoadLoop {
  public:
    LoadLoop(RunState& run, std::vector<Workload*> workloads)
        : run_(run), workloads_(std::move(workloads)) {}

    void start();
    void join();

  private:
    void run();

    RunState& run_;
    std::vector<Workload*> workloads_;  // one client each
    std::thread thread_;
};

}  // namespace kvexec::pillowfight
