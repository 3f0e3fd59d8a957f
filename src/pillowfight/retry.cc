#include "pillowfight/retry.h"

#include <algorithm>

namespace kvexec::pillowfight {

using protocol::Status;

namespace {

// `first`, doubled `times` times, at most kMaxBackoff.
std::chrono::milliseconds doubled(std::chrono::milliseconds first, unsigned times) {
    return std::min(first * (1u << std::min(times, 16u)), kMaxBackoff);
}

std::chrono::milliseconds backoff(unsigned retries) {
    return doubled(kFirstBackoff, retries);
}

}  // namespace

Retry retryOf(Status status, unsigned retries, bool routedElsewhere) {
    const bool retriable = status == Status::NotMyVbucket || status == Status::TemporaryFailure ||
                           status == Status::SyncWriteReCommitInProgress;
    if (!retriable || retries >= kMaxRetries) {
        return {};
    }
    if (status == Status::NotMyVbucket && routedElsewhere) {
        return {true, std::chrono::milliseconds(0)};
    }
    return {true, backoff(retries)};
}

Retry retryOfLost(bool idempotent, bool sent, unsigned retries) {
    if ((sent && !idempotent) || retries >= kMaxRetries) {
        return {};
    }
    return {true, backoff(retries)};
}

std::chrono::milliseconds reconnectDelay(unsigned attempts) {
    return doubled(kFirstReconnect, attempts);
}

}  // namespace kvexec::pillowfight
