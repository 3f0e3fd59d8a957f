#include "pillowfight/retry.h"

#include <algorithm>

namespace kvexec::pillowfight {

using protocol::Status;

Retry retryOf(Status status, unsigned retries, bool routedElsewhere) {
    const bool retriable = status == Status::NotMyVbucket || status == Status::TemporaryFailure ||
                           status == Status::SyncWriteReCommitInProgress;
    if (!retriable || retries >= kMaxRetries) {
        return {};
    }
    if (status == Status::NotMyVbucket && routedElsewhere) {
        return {true, std::chrono::milliseconds(0)};
    }
    const auto backoff = kFirstBackoff * (1u << std::min(retries, 16u));
    return {true, std::min(backoff, kMaxBackoff)};
}

}  // namespace kvexec::pillowfight
