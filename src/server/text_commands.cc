// The text protocol's commands. Keys map to vBuckets by CRC (text clients
// know nothing of vBuckets); replies follow memcached's words (STORED,
// NOT_STORED, EXISTS, NOT_FOUND, ...).
#include "protocol/keys.h"
#include "server/connection.h"
#include "server/document_body.h"
#include "server/expiry.h"
#include "server/stats.h"
#include "server/text_errors.h"

namespace kvexec::server {

using protocol::TextCommand;
using protocol::TextVerb;

namespace {

std::string_view storeReply(const TextCommand& command, engine::Status status) {
    switch (status) {
        case engine::Status::Success:
            return "STORED\r\n";
        case engine::Status::KeyExists:
            // add of an existing key is NOT_STORED; a CAS mismatch is EXISTS.
            return command.verb == TextVerb::Add ? "NOT_STORED\r\n" : "EXISTS\r\n";
        case engine::Status::KeyNotFound:
            return command.verb == TextVerb::Cas ? "NOT_FOUND\r\n" : "NOT_STORED\r\n";
        case engine::Status::NotStored:
        case engine::Status::Locked:  // memcached has no locks: not stored
            return "NOT_STORED\r\n";
        default:
            return textServerError(status);
    }
}

}  // namespace

engine::Vbid Connection::textVbid(std::string_view key) const {
    return protocol::vbucketOfKey(key, static_cast<std::uint16_t>(context_.config.vbuckets));
}

std::string_view textServerError(engine::Status status) {
    switch (status) {
        case engine::Status::TooBig:
            return "SERVER_ERROR object too large for cache\r\n";
        case engine::Status::Locked:  // a Couchbase client holds a lock (GET_LOCKED)
            return "SERVER_ERROR document locked\r\n";
        case engine::Status::TempFail:
        case engine::Status::SyncWriteReCommitInProgress:  // memcached's word for "retry"
        case engine::Status::NoMemory:
            return "SERVER_ERROR out of memory storing object\r\n";
        default:
            return "SERVER_ERROR internal error\r\n";
    }
}

void Connection::textReply(const TextCommand& command, std::string_view line) {
    if (!command.noreply) {
        out_.append(line);
    }
}

void Connection::executeText(const TextCommand& command) {
    const bool anyone = command.verb == TextVerb::Version || command.verb == TextVerb::Quit;
    if (!authenticated_ && !anyone) {
        out_ += "CLIENT_ERROR unauthenticated: use the binary protocol's SASL\r\n";
        return;
    }
    if (!mayUse(*bucket_) && !anyone) {
        // Authenticated by binary SASL on this connection, as a user the
        // connection's bucket is not given to.
        out_ += "CLIENT_ERROR no access to bucket " + bucket_->name + "\r\n";
        return;
    }
    switch (command.verb) {
        case TextVerb::Get:
        case TextVerb::Gets:
            return textGet(command);
        case TextVerb::Set:
        case TextVerb::Add:
        case TextVerb::Replace:
        case TextVerb::Append:
        case TextVerb::Prepend:
        case TextVerb::Cas:
            return textStore(command);
        case TextVerb::Delete:
            return textDelete(command);
        case TextVerb::Incr:
        case TextVerb::Decr:
            return textArithmetic(command);
        case TextVerb::Touch:
            return textTouch(command);
        case TextVerb::FlushAll:
            return textFlush(command);
        case TextVerb::Stats:
            return textStats(command);
        case TextVerb::Gat:
        case TextVerb::Gats:
            return textGetAndTouch(command);
        case TextVerb::Version:
            out_ += "VERSION " + std::string(kServerVersion) + "\r\n";
            return;
        case TextVerb::Verbosity:
            return textReply(command, "OK\r\n");
        case TextVerb::Quit:
            closeAfterWrite();
            return;
        case TextVerb::MetaGet:
        case TextVerb::MetaSet:
        case TextVerb::MetaDelete:
        case TextVerb::MetaArithmetic:
        case TextVerb::MetaNoop:
        case TextVerb::MetaDebug:
            return executeMeta(command);
    }
}

void Connection::textStats(const TextCommand& command) {
    if (command.statsGroup == "conns") {
        return textStatsConns();
    }
    if (command.statsGroup == "cachedump") {
        return textStatsCachedump(command);
    }
    auto stats = collectStats(context_, *bucket_, std::string(command.statsGroup));
    if (!stats) {
        out_ += "ERROR\r\n";
        return;
    }
    for (const auto& [name, value] : *stats) {
        out_ += "STAT " + name + " " + value + "\r\n";
    }
    out_ += "END\r\n";
}

void Connection::textGet(const TextCommand& command) {
    const bool withCas = command.verb == TextVerb::Gets;
    for (std::string_view key : command.keys) {
        counters_->cmdGet.fetch_add(1, std::memory_order_relaxed);
        auto done = completion<engine::GetResult>(
            [this, withCas, name = std::string(key)](const engine::GetResult& r) {
                if (r.status == engine::Status::SyncWriteReCommitInProgress ||
                    r.status == engine::Status::TempFail) {
                    out_ += textServerError(r.status);  // not a miss: the key may hold a value
                    return;
                }
                if (r.status != engine::Status::Success) {
                    counters_->getMisses.fetch_add(1, std::memory_order_relaxed);
                    return;
                }
                counters_->getHits.fetch_add(1, std::memory_order_relaxed);
                out_ += "VALUE " + name + " " + std::to_string(r.item.meta.flags) + " " +
                        std::to_string(documentBody(r.item).size());
                if (withCas) {
                    out_ += " " + std::to_string(r.item.meta.cas);
                }
                out_ += "\r\n";
                out_ += documentBody(r.item);
                out_ += "\r\n";
            });
        callEngine([&] { bucket().get(textVbid(key), std::string(key), std::move(done)); });
    }
    out_ += "END\r\n";
}

void Connection::textStore(const TextCommand& command) {
    engine::StoreRequest store;
    store.key.assign(command.keys[0]);
    store.vbid = textVbid(store.key);
    store.value.assign(command.value);
    store.flags = command.flags;
    store.expiry = absoluteExpiry(command.exptime);
    store.cas = command.verb == TextVerb::Cas ? command.cas : 0;
    switch (command.verb) {
        case TextVerb::Add:
            store.operation = engine::StoreOperation::Add;
            break;
        case TextVerb::Replace:
            store.operation = engine::StoreOperation::Replace;
            break;
        case TextVerb::Append:
            store.operation = engine::StoreOperation::Append;
            break;
        case TextVerb::Prepend:
            store.operation = engine::StoreOperation::Prepend;
            break;
        default:
            store.operation = engine::StoreOperation::Set;
    }
    counters_->cmdSet.fetch_add(1, std::memory_order_relaxed);
    TextCommand header;
    header.verb = command.verb;
    header.noreply = command.noreply;
    auto done = completion<engine::MutationResult>([this, header](const engine::MutationResult& r) {
        textReply(header, storeReply(header, r.status));
    });
    callEngine([&] { bucket().store(std::move(store), std::move(done)); });
}

void Connection::textDelete(const TextCommand& command) {
    engine::RemoveRequest remove;
    remove.key.assign(command.keys[0]);
    remove.vbid = textVbid(remove.key);
    const bool noreply = command.noreply;
    auto done =
        completion<engine::MutationResult>([this, noreply](const engine::MutationResult& r) {
            TextCommand header;
            header.noreply = noreply;
            switch (r.status) {
                case engine::Status::Success:
                    return textReply(header, "DELETED\r\n");
                case engine::Status::KeyNotFound:
                    return textReply(header, "NOT_FOUND\r\n");
                default:
                    return textReply(header, textServerError(r.status));
            }
        });
    callEngine([&] { bucket().remove(std::move(remove), std::move(done)); });
}

void Connection::textArithmetic(const TextCommand& command) {
    engine::ArithmeticRequest arithmetic;
    arithmetic.key.assign(command.keys[0]);
    arithmetic.vbid = textVbid(arithmetic.key);
    arithmetic.increment = command.verb == TextVerb::Incr;
    arithmetic.delta = command.delta;
    const bool noreply = command.noreply;
    auto done =
        completion<engine::ArithmeticResult>([this, noreply](const engine::ArithmeticResult& r) {
            TextCommand header;
            header.noreply = noreply;
            switch (r.status) {
                case engine::Status::Success:
                    return textReply(header, std::to_string(r.value) + "\r\n");
                case engine::Status::KeyNotFound:
                    return textReply(header, "NOT_FOUND\r\n");
                case engine::Status::DeltaBadValue:
                    return textReply(
                        header, "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n");
                default:
                    return textReply(header, textServerError(r.status));
            }
        });
    callEngine([&] { bucket().arithmetic(std::move(arithmetic), std::move(done)); });
}

void Connection::textTouch(const TextCommand& command) {
    std::string key(command.keys[0]);
    const engine::Vbid vbid = textVbid(key);
    const bool noreply = command.noreply;
    counters_->cmdTouch.fetch_add(1, std::memory_order_relaxed);
    auto done = completion<engine::GetResult>([this, noreply](const engine::GetResult& r) {
        TextCommand header;
        header.noreply = noreply;
        textReply(header, r.status == engine::Status::Success ? "TOUCHED\r\n" : "NOT_FOUND\r\n");
    });
    callEngine([&] {
        bucket().touch(vbid, std::move(key), absoluteExpiry(command.exptime), std::move(done));
    });
}

void Connection::textFlush(const TextCommand& command) {
    if (command.exptime != 0) {
        out_ += "SERVER_ERROR delayed flush_all is not supported\r\n";
        return;
    }
    counters_->cmdFlush.fetch_add(1, std::memory_order_relaxed);
    engine::Status status = engine::Status::Success;
    bucket().flush([&status](engine::Status s) { status = s; });  // inline
    textReply(command, status == engine::Status::Success ? "OK\r\n" : textServerError(status));
}

}  // namespace kvexec::server
