// server_process_test.h: a test fixture around one kvexec-server process
// (server_process.h) on a fresh data directory, with --sync none. Every
// test ends with a graceful stop that must exit 0: the server survived
// what the test did and (in sanitizer builds) reported nothing at exit.
//
// Thread safety: the test's thread only.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server_process.h"

namespace kvexec::server::test {

class ServerProcessTest : public ::testing::Test {
  protected:
    // Starts (or, after stop(), starts again) the server with `args`.
    void start(std::vector<std::string> args = {}) {
        args.insert(args.end(), {"--sync", "none"});
        server_ = std::make_unique<ServerProcess>(dir_.path(), args);
    }
    // A graceful stop in the middle of a test (a restart follows).
    void stop() {
        ASSERT_EQ(server_->stop(SIGTERM), 0);
        server_.reset();
    }
    std::uint16_t port() const { return server_->port(); }
    void TearDown() override {
        if (server_) {
            EXPECT_EQ(server_->stop(SIGTERM), 0);
        }
    }

    TempDir dir_;
    std::unique_ptr<ServerProcess> server_;
};

}  // namespace kvexec::server::test
