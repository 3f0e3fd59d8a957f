// bench/peers/asio_peer.cc: Boost.Asio thread_pool and steady_timer peers.
//
// Thread safety of the timers: Asio objects are not safe for concurrent use,
// but each timer is only ever touched by the one benchmark thread that owns
// its index; the io thread only runs completion handlers, which touch no
// timer. The io_context itself is thread-safe.
#include "peers/asio_peer.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <deque>
#include <thread>
#include <utility>

#include "peers/posting_targets.h"

namespace kvexec::bench {
namespace {

namespace asio = boost::asio;

class AsioPoster {
  public:
    explicit AsioPoster(std::size_t threads) : pool_(threads) {}
    ~AsioPoster() { pool_.join(); }  // runs what is queued, then joins

    template <class F>
    void post(F&& f) {
        asio::post(pool_, std::forward<F>(f));
    }

  private:
    asio::thread_pool pool_;
};

class AsioTimers final : public TimeoutTarget {
  public:
    AsioTimers(std::size_t count, const DelayTable& delays) {
        for (std::size_t i = 0; i < count; ++i) {
            timers_.emplace_back(io_);
            arm(timers_.back(), delays.at(i));
        }
        thread_ = std::thread([this] { io_.run(); });
    }

    ~AsioTimers() override {
        io_.stop();
        thread_.join();
        timers_.clear();  // pending handlers are destroyed with io_
    }

    void rearm(std::size_t index, Delay d) override { arm(timers_[index], d); }

  private:
    static void arm(asio::steady_timer& timer, Delay d) {
        timer.expires_after(d);
        timer.async_wait([](const boost::system::error_code&) {});
    }

    asio::io_context io_;
    asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
    std::deque<asio::steady_timer> timers_;
    std::thread thread_;
};

}  // namespace

Implementation asioPeer() {
    return {"Peer<Asio>", "Asio",
            [](std::size_t n) { return std::make_unique<PostingOneShot<AsioPoster>>(n); },
            [](std::size_t n) { return std::make_unique<PostingLongLived<AsioPoster>>(n); },
            [](std::size_t count, const DelayTable& delays) {
                return std::make_unique<AsioTimers>(count, delays);
            }};
}

}  // namespace kvexec::bench
