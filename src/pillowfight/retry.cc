#include "pillowfight/retry.h"

#include <algorithm>

namespace kvexec::pillowfight {

using protocol::Status;

Retry retryOf(Status status, unsigned retries, bool routedElsewhere) {
    if ((status != Status::NotMyVbucket && status != Status::TemporaryFailure) ||
        retries >= kMaxRetries) {
        return {};
    }
    if (status == Status::NotMyVbucket && routedElsewhere) {
        return {true, std::chrono::milliseconds(0)};
    }
    const auto backoff = kFirstBackoff * (1u << std::min(retries, 16u));
    return {true, std::min(backoff, kMaxBackoff)};
}

}  // namespace kvexec::pillowfight
