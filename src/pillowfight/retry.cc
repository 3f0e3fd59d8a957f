#include "pillowfight/retry.h"

#include <algorithm>

namespace kvexec::pillowfight {

using protocol::Status;

namespace {

std::chrono::milliseconds backoff(unsigned retries) {
    return std::min(kFirstBackoff * (1u << std::min(retries, 16u)), kMaxBackoff);
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
    return std::min(kFirstReconnect * (1u << std::min(attempts, 16u)), kMaxBackoff);
}

}  // namespace kvexec::pillowfight
