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

struct event;

namespace kvexec::pillowfight {

class Connection;

class LoadLoop {
  public:
    LoadLoop(RunState& run, std::vector<Workload*> workloads)
        : run_(run), workloads_(std::move(workloads)) {}

    void start();
    void join();

  private:
    void run();
    static void onPoll(int fd, short what, void* self);

    RunState& run_;
    std::vector<Workload*> workloads_;  // one client each
    // Loop thread only: clients ready before the go, and the timer that
    // polls for it (the main thread only sets an atomic).
    std::vector<Connection*> waiting_;
    event* poll_ = nullptr;
    std::thread thread_;
};

}  // namespace kvexec::pillowfight
