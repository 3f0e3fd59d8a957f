// wait.h: waiting in tests for something another thread or process does,
// with a deadline: poll a condition until it holds or the time is up (a
// test never sleeps and hopes). Header-only and free of kvexec's headers,
// so that every test binary can use it, also those built without the
// executor.
//
// Thread safety: the helpers keep no state; `done` is called on the
// calling thread only.
#pragma once

#include <chrono>
#include <thread>

namespace kvexec::test {

// Polls `done`, calling `pause` between polls, until it holds or `limit`
// has passed; returns done().
template <class Done, class Pause>
bool pollUntil(Done done, std::chrono::milliseconds limit, Pause pause) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() > until) {
            return done();
        }
        pause();
    }
    return true;
}

// Polls `done` every `interval` until it holds or `limit` has passed.
template <class Done>
bool waitUntil(Done done, std::chrono::milliseconds limit,
               std::chrono::milliseconds interval = std::chrono::milliseconds(1)) {
    return pollUntil(done, limit, [interval] { std::this_thread::sleep_for(interval); });
}

}  // namespace kvexec::test
