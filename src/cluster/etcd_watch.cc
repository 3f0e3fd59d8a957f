#include "cluster/etcd_watch.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cluster/etcd_codec.h"
#include "cluster/etcd_connection.h"
#include "cluster/etcd_http.h"

namespace kvexec::cluster {

// The libevent side of a watch: an event base, one connection, the
// streaming request, and an eventfd that stop() writes to break the loop
// (libevent here is built without its locking, so no other thread may
// touch the base). Created on the constructing thread before the watch
// thread starts, run on the watch thread, destroyed after it is joined.
class EtcdWatch::Stream {
  public:
    Stream(EtcdWatch& owner, const EtcdEndpoint& endpoint, std::string body, OnEvent onEvent,
           OnEnd onEnd);
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    void run();          // the watch thread: request, then the loop
    void requestStop();  // any thread

  private:
    static void onChunk(evhttp_request* request, void* arg);
    static void onDone(evhttp_request* request, void* arg);
    static void onFailure(evhttp_request_error error, void* arg);
    static void onStop(evutil_socket_t fd, short what, void* arg);

    void release();  // frees the libevent side; safe on a partly built one
    void consume(std::string_view bytes);
    void handle(const std::string& line);
    void end(const std::string& reason);

    EtcdWatch& owner_;
    EtcdEndpoint endpoint_;
    EtcdConnector connector_;
    std::string body_;
    OnEvent onEvent_;
    OnEnd onEnd_;
    event_base* base_ = nullptr;
    evhttp_connection* connection_ = nullptr;
    int stopFd_ = -1;
    event* stopEvent_ = nullptr;
    // Watch thread only:
    std::string partial_;  // bytes of a line not yet complete
    std::string errorBody_;
    int failure_ = -1;
    bool open_ = false;
    bool ended_ = false;
};

EtcdWatch::Stream::Stream(EtcdWatch& owner, const EtcdEndpoint& endpoint, std::string body,
                          OnEvent onEvent, OnEnd onEnd)
    : owner_(owner),
      endpoint_(endpoint),
      connector_(endpoint),
      body_(std::move(body)),
      onEvent_(std::move(onEvent)),
      onEnd_(std::move(onEnd)) {
    base_ = event_base_new();
    stopFd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (base_ == nullptr || stopFd_ < 0) {
        release();
        throw EtcdError("etcd watch: cannot create its event base");
    }
    stopEvent_ = event_new(base_, stopFd_, EV_READ | EV_PERSIST, onStop, this);
    // A stream may stay silent for as long as nothing changes: no read
    // timeout worth the name (libevent's default would cut it at 50 s).
    const timeval idle{365L * 24 * 3600, 0};
    connection_ = connector_.connect(base_, idle);
    if (stopEvent_ == nullptr || connection_ == nullptr) {
        release();
        throw EtcdError("etcd watch: cannot create its connection");
    }
    event_add(stopEvent_, nullptr);
}

EtcdWatch::Stream::~Stream() {
    release();
}

void EtcdWatch::Stream::release() {
    // Frees the request in flight too, without calling its callbacks.
    if (connection_ != nullptr) {
        evhttp_connection_free(connection_);
    }
    if (stopEvent_ != nullptr) {
        event_free(stopEvent_);
    }
    if (stopFd_ >= 0) {
        close(stopFd_);
    }
    if (base_ != nullptr) {
        event_base_free(base_);
    }
    connection_ = nullptr;
    stopEvent_ = nullptr;
    stopFd_ = -1;
    base_ = nullptr;
}

void EtcdWatch::Stream::run() {
    evhttp_request* request = evhttp_request_new(onDone, this);
    if (request == nullptr) {
        end("evhttp_request_new failed");
        return;
    }
    evhttp_request_set_chunked_cb(request, onChunk);
    evhttp_request_set_error_cb(request, onFailure);
    prepareEtcdRequest(request, endpoint_, body_);
    if (evhttp_make_request(connection_, request, EVHTTP_REQ_POST, "/v3/watch") != 0) {
        end("evhttp_make_request failed");
        return;
    }
    event_base_dispatch(base_);
}

void EtcdWatch::Stream::requestStop() {
    const std::uint64_t one = 1;
    // Cannot fail short of a closed fd: the counter only saturates.
    [[maybe_unused]] const ssize_t written = write(stopFd_, &one, sizeof one);
}

void EtcdWatch::Stream::onStop(evutil_socket_t, short, void* arg) {
    event_base_loopbreak(static_cast<Stream*>(arg)->base_);
}

void EtcdWatch::Stream::onFailure(evhttp_request_error error, void* arg) {
    static_cast<Stream*>(arg)->failure_ = error;
}

void EtcdWatch::Stream::onChunk(evhttp_request* request, void* arg) {
    auto& stream = *static_cast<Stream*>(arg);
    evbuffer* input = evhttp_request_get_input_buffer(request);
    std::string bytes(evbuffer_get_length(input), '\0');
    evbuffer_remove(input, bytes.data(), bytes.size());
    if (evhttp_request_get_response_code(request) != 200) {
        stream.errorBody_ += bytes;  // etcd's reason, reported at the end
        return;
    }
    stream.consume(bytes);
}

void EtcdWatch::Stream::onDone(evhttp_request* request, void* arg) {
    auto& stream = *static_cast<Stream*>(arg);
    const int status = request != nullptr ? evhttp_request_get_response_code(request) : 0;
    if (status == 0) {
        stream.end(stream.connector_.failure(stream.connection_, stream.failure_));
    } else if (status != 200) {
        std::string reason = "HTTP ";
        reason += std::to_string(status);
        reason += ": ";
        reason += etcd_codec::errorMessage(stream.errorBody_);
        stream.end(reason);
    } else {
        stream.end("etcd closed the watch stream");
    }
}

// The gateway writes one JSON message per line.
void EtcdWatch::Stream::consume(std::string_view bytes) {
    partial_ += bytes;
    std::size_t start = 0;
    for (auto newline = partial_.find('\n'); newline != std::string::npos && !ended_;
         newline = partial_.find('\n', start)) {
        handle(partial_.substr(start, newline - start));
        start = newline + 1;
    }
    partial_.erase(0, start);
}

void EtcdWatch::Stream::handle(const std::string& line) {
    etcd_codec::WatchMessage message;
    try {
        message = etcd_codec::readWatchMessage(line);
    } catch (const EtcdError& error) {
        end(error.what());
        return;
    }
    if (message.canceled) {
        std::string reason = "watch canceled";
        if (message.compactRevision > 0) {
            reason += ": revision compacted up to ";
            reason += std::to_string(message.compactRevision);
        }
        if (!message.cancelReason.empty()) {
            reason += ": ";
            reason += message.cancelReason;
        }
        end(reason);
        return;
    }
    if (message.created && !open_) {
        open_ = true;
        owner_.advance(Phase::Open, {});
    }
    for (const WatchEvent& event : message.events) {
        // An exception must not cross libevent's C frames.
        try {
            onEvent_(event);
        } catch (const std::exception& error) {
            std::string reason = "the event callback threw: ";
            reason += error.what();
            end(reason);
            return;
        }
    }
}

void EtcdWatch::Stream::end(const std::string& reason) {
    if (ended_) {
        return;
    }
    ended_ = true;
    std::string message = "etcd watch ";
    message += endpoint_.url();
    message += ": ";
    message += reason;
    if (open_ && onEnd_) {
        onEnd_(message);
    }
    owner_.advance(Phase::Ended, message);
    event_base_loopbreak(base_);
}

EtcdWatch::EtcdWatch(const EtcdEndpoint& endpoint, std::string key, std::string rangeEnd,
                     std::int64_t startRevision, OnEvent onEvent, OnEnd onEnd,
                     std::chrono::milliseconds timeout) {
    const std::string body = etcd_codec::watchCreateRequest(key, rangeEnd, startRevision).dump();
    stream_ = std::make_unique<Stream>(*this, endpoint, body, std::move(onEvent), std::move(onEnd));
    thread_ = std::thread([this] { stream_->run(); });
    std::string failure;
    {
        detail::UniqueLock lock(mutex_);
        const bool settled = phaseChanged_.wait_for(lock.native(), timeout, [this] {
            mutex_.assertHeld();
            return phase_ != Phase::Opening;
        });
        if (!settled) {
            failure = "etcd watch ";
            failure += endpoint.url();
            failure += ": not confirmed in time";
        } else if (phase_ == Phase::Ended) {
            failure = endReason_;
        }
    }
    if (!failure.empty()) {
        stop();
        throw EtcdError(failure);
    }
}

EtcdWatch::~EtcdWatch() {
    stop();
}

void EtcdWatch::stop() {
    // Concurrent callers all return after the one join.
    std::call_once(stopOnce_, [this] {
        stream_->requestStop();
        thread_.join();
    });
}

void EtcdWatch::advance(Phase phase, const std::string& reason) {
    {
        detail::MutexLock lock(mutex_);
        phase_ = phase;
        endReason_ = reason;
    }
    phaseChanged_.notify_all();
}

}  // namespace kvexec::cluster
