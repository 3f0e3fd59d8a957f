// The text protocol's meta commands (mg, ms, md, ma, mn, me) and
// get-and-touch (gat, gats), answered as memcached 1.6.18 answers them, on
// the engine's get / store / remove / arithmetic / touch. The parser
// (protocol/meta_request.h) has already refused what 1.6.18 refuses (E, x,
// unknown letters, bad tokens).
//
// Where memcached's answer depends on state kvexec does not keep, kvexec
// says so instead of making a value up (the README lists these too):
// - h (hit before) and l (seconds since last access): no access history per
//   document. mg with h or l is answered with a SERVER_ERROR.
// - I (invalidate: the stale mark, and the X / W / Z tokens that follow it)
//   and R (win the recache below a TTL): no stale mark and no "win token
//   already sent" mark per document. md I, ms I with a CAS (set / replace
//   modes, where memcached would store a stale item) and mg R get a
//   SERVER_ERROR; ms I without a CAS does nothing in memcached either.
// - mg N (vivify on miss): the mg that creates the empty stub gets W, as in
//   memcached (the engine's add lets exactly one win). Later fetches of the
//   stub carry no Z: kvexec cannot tell the stub from an empty value.
// - u (no LRU bump): kvexec has no LRU, so there is nothing to skip.
// - T on a hit (mg, ma): kvexec's touch is a mutation and gives the document
//   a new CAS, memcached keeps the CAS; the c token shows the real, new one.
// - me: the debug line has memcached's exp and cas, then kvexec's own
//   fields (vbid, seqno, flags, value_bytes) in place of la / fetch / cls /
//   size, which kvexec does not have.
#include "protocol/base64.h"
#include "protocol/keys.h"
#include "server/connection.h"
#include "server/document_body.h"
#include "server/expiry.h"
#include "server/text_errors.h"

namespace kvexec::server {

using protocol::MetaRequest;
using protocol::TextCommand;
using protocol::TextVerb;

namespace {

// " k<key>", base64-encoded (and marked " b") when the request's key was.
std::string keyToken(const MetaRequest& r) {
    return r.base64Key ? " k" + protocol::encodeBase64(r.key) + " b" : " k" + r.key;
}

// Remaining seconds as memcached's t token shows them; -1: no expiry.
std::string ttlRemaining(std::uint32_t expiry) {
    if (expiry == 0) {
        return "-1";
    }
    return std::to_string(static_cast<std::int64_t>(expiry) - unixNow());
}

// The O and k tokens, in request order: every reply but a hit's carries
// only these.
std::string echoTokens(const MetaRequest& r) {
    std::string out;
    for (char flag : r.flags) {
        if (flag == 'O') {
            out += " " + r.opaque;
        } else if (flag == 'k') {
            out += keyToken(r);
        }
    }
    return out;
}

std::string statusLine(std::string_view code, const MetaRequest& r) {
    return std::string(code) + echoTokens(r) + "\r\n";
}

// A document an mg or ma reports. Its expiry steps through the request's
// flags as memcached applies them: `before`, then `touched` from the T flag
// on (a t token before T shows the old TTL); a stub mg N created has no
// expiry before the N flag.
struct Found {
    std::string value;
    std::uint32_t flags = 0;
    std::uint64_t cas = 0;
    std::uint32_t before = 0;
    std::uint32_t touched = 0;
    bool won = false;            // W: this mg created the document (N)
    std::uint32_t vivified = 0;  // the created stub's expiry
};

// "VA <size> <tokens>\r\n<value>\r\n" with v, else "HD <tokens>\r\n". mg
// answers s and f; ma does not.
std::string foundReply(const MetaRequest& r, const Found& found, bool isGet = true) {
    const std::string size = std::to_string(found.value.size());
    std::string line = r.returnValue ? "VA " + size : "HD";
    std::uint32_t expiry = found.before;
    for (char flag : r.flags) {
        switch (flag) {
            case 'T':
                expiry = found.touched;
                break;
            case 'N':
                expiry = found.won ? found.vivified : expiry;
                break;
            case 's':
                line += isGet ? " s" + size : "";
                break;
            case 't':
                line += " t" + ttlRemaining(expiry);
                break;
            case 'c':
                line += " c" + std::to_string(found.cas);
                break;
            case 'f':
                line += isGet ? " f" + std::to_string(found.flags) : "";
                break;
            case 'O':
                line += " " + r.opaque;
                break;
            case 'k':
                line += keyToken(r);
                break;
            default:
                break;
        }
    }
    line += found.won ? " W\r\n" : "\r\n";
    if (r.returnValue) {
        line += found.value + "\r\n";
    }
    return line;
}

// The SERVER_ERROR for a flag whose answer needs state kvexec does not keep
// (see the file comment); empty when the request is answerable.
std::string unsupported(TextVerb verb, const MetaRequest& r) {
    const bool casMode = r.mode == 0 || r.mode == 'S' || r.mode == 'R';
    if (verb == TextVerb::MetaGet && (r.has('h') || r.has('l'))) {
        return "SERVER_ERROR mg flags h and l are not supported: kvexec keeps no access "
               "history\r\n";
    }
    if ((verb == TextVerb::MetaGet && r.recacheTtl) ||
        (verb == TextVerb::MetaDelete && r.invalidate) ||
        (verb == TextVerb::MetaSet && r.invalidate && r.compareCas && casMode)) {
        return "SERVER_ERROR stale items (flags I, R) are not supported\r\n";
    }
    return {};
}

engine::StoreOperation storeOperation(char mode) {
    switch (mode) {
        case 'E':
            return engine::StoreOperation::Add;
        case 'A':
            return engine::StoreOperation::Append;
        case 'P':
            return engine::StoreOperation::Prepend;
        case 'R':
            return engine::StoreOperation::Replace;
        default:
            return engine::StoreOperation::Set;
    }
}

// ms's return code for an engine status.
std::string_view storeCode(const MetaRequest& r, engine::Status status) {
    switch (status) {
        case engine::Status::Success:
            return "HD";
        case engine::Status::KeyExists:  // add of an existing key, or a CAS mismatch
            return r.mode == 'E' ? "NS" : "EX";
        case engine::Status::KeyNotFound:  // CAS on a missing key, or replace
            return r.compareCas ? "NF" : "NS";
        case engine::Status::NotStored:  // append / prepend to a missing key
            return "NS";
        default:
            return {};
    }
}

}  // namespace

void Connection::executeMeta(const TextCommand& command) {
    const MetaRequest& r = command.meta;
    if (std::string error = unsupported(command.verb, r); !error.empty()) {
        out_ += error;
        return;
    }
    switch (command.verb) {
        case TextVerb::MetaGet:
            return metaGet(std::make_shared<const MetaRequest>(r), true);
        case TextVerb::MetaSet:
            return metaSet(command);
        case TextVerb::MetaDelete:
            return metaDelete(r);
        case TextVerb::MetaArithmetic:
            return metaArithmetic(std::make_shared<const MetaRequest>(r));
        case TextVerb::MetaNoop:
            out_ += "MN\r\n";
            return;
        case TextVerb::MetaDebug:
            return metaDebug(r);
        default:
            return;  // not a meta command: executeText does not send one here
    }
}

void Connection::metaGet(std::shared_ptr<const MetaRequest> r, bool mayVivify) {
    counters_->cmdGet.fetch_add(1, std::memory_order_relaxed);
    auto done = completion<engine::GetResult>([this, r, mayVivify](const engine::GetResult& got) {
        if (got.status == engine::Status::Success) {
            counters_->getHits.fetch_add(1, std::memory_order_relaxed);
            return metaGetHit(r, got.item);
        }
        if (got.status != engine::Status::KeyNotFound) {
            out_ += textServerError(got.status);
            return;
        }
        counters_->getMisses.fetch_add(1, std::memory_order_relaxed);
        if (r->vivifyTtl && mayVivify) {
            return metaVivify(r);
        }
        if (!r->quiet) {
            out_ += statusLine("EN", *r);
        }
    });
    callEngine([&] { bucket().get(textVbid(r->key), r->key, std::move(done)); });
}

void Connection::metaGetHit(std::shared_ptr<const MetaRequest> r, const engine::Item& item) {
    Found found{std::string(documentBody(item)), item.meta.flags, item.meta.cas, item.meta.expiry,
                item.meta.expiry};
    if (!r->ttl) {
        out_ += foundReply(*r, found);
        return;
    }
    counters_->cmdTouch.fetch_add(1, std::memory_order_relaxed);
    auto done = completion<engine::GetResult>(
        [this, r, found = std::move(found)](const engine::GetResult& touched) mutable {
            if (touched.status == engine::Status::KeyNotFound) {
                // Gone between the get and the touch: a miss after all.
                out_ += r->quiet ? "" : statusLine("EN", *r);
                return;
            }
            if (touched.status != engine::Status::Success) {
                out_ += textServerError(touched.status);
                return;
            }
            found.value = documentBody(touched.item);
            found.flags = touched.item.meta.flags;
            found.cas = touched.item.meta.cas;
            found.touched = touched.item.meta.expiry;
            out_ += foundReply(*r, found);
        });
    callEngine([&] {
        bucket().touch(textVbid(r->key), r->key, absoluteExpiry(*r->ttl), std::move(done));
    });
}

// mg N on a miss: an empty document with N's TTL; the add that creates it
// wins (W). If another client's add came first, its stub is fetched again.
void Connection::metaVivify(std::shared_ptr<const MetaRequest> r) {
    engine::StoreRequest add;
    add.operation = engine::StoreOperation::Add;
    add.key = r->key;
    add.vbid = textVbid(add.key);
    add.expiry = absoluteExpiry(*r->vivifyTtl);
    counters_->cmdSet.fetch_add(1, std::memory_order_relaxed);
    auto done = completion<engine::MutationResult>(
        [this, r, expiry = add.expiry](const engine::MutationResult& stored) {
            if (stored.status == engine::Status::KeyExists) {
                return metaGet(r, false);
            }
            if (stored.status != engine::Status::Success) {
                out_ += textServerError(stored.status);
                return;
            }
            // The stub keeps N's TTL: a T in the same mg is not applied to it.
            out_ += foundReply(*r, Found{{}, 0, stored.cas, 0, expiry, true, expiry});
        });
    callEngine([&] { bucket().store(std::move(add), std::move(done)); });
}

void Connection::metaSet(const TextCommand& command) {
    const MetaRequest& r = command.meta;
    engine::StoreRequest store;
    store.operation = storeOperation(r.mode);
    store.key = r.key;
    store.vbid = textVbid(store.key);
    store.value.assign(command.value);
    store.flags = r.clientFlags;
    store.expiry = r.ttl ? absoluteExpiry(*r.ttl) : 0;
    // memcached's add ignores a CAS; the engine refuses one.
    if (store.operation != engine::StoreOperation::Add) {
        store.cas = r.compareCas.value_or(0);
    }
    counters_->cmdSet.fetch_add(1, std::memory_order_relaxed);
    auto done = completion<engine::MutationResult>(
        [this, r = std::make_shared<const MetaRequest>(r)](const engine::MutationResult& result) {
            const std::string_view code = storeCode(*r, result.status);
            if (code.empty()) {
                out_ += textServerError(result.status);
                return;
            }
            if (result.status == engine::Status::Success && r->quiet) {
                return;
            }
            // Tokens in request order; c is the new CAS, 0 when not stored.
            std::string line(code);
            for (char flag : r->flags) {
                if (flag == 'O') {
                    line += " " + r->opaque;
                } else if (flag == 'k') {
                    line += keyToken(*r);
                } else if (flag == 'c') {
                    line += " c" + std::to_string(result.cas);
                }
            }
            out_ += line + "\r\n";
        });
    callEngine([&] { bucket().store(std::move(store), std::move(done)); });
}

void Connection::metaDelete(const MetaRequest& request) {
    engine::RemoveRequest remove;
    remove.key = request.key;
    remove.vbid = textVbid(remove.key);
    remove.cas = request.compareCas.value_or(0);
    auto done =
        completion<engine::MutationResult>([this, r = std::make_shared<const MetaRequest>(request)](
                                               const engine::MutationResult& result) {
            auto& counters = *counters_;
            switch (result.status) {
                case engine::Status::Success:
                    counters.deleteHits.fetch_add(1, std::memory_order_relaxed);
                    out_ += r->quiet ? "" : statusLine("HD", *r);
                    return;
                case engine::Status::KeyNotFound:
                    counters.deleteMisses.fetch_add(1, std::memory_order_relaxed);
                    out_ += statusLine("NF", *r);
                    return;
                case engine::Status::KeyExists:
                    counters.deleteMisses.fetch_add(1, std::memory_order_relaxed);
                    out_ += statusLine("EX", *r);
                    return;
                default:
                    out_ += textServerError(result.status);
            }
        });
    callEngine([&] { bucket().remove(std::move(remove), std::move(done)); });
}

// ma: the counter first; on a miss with N, a second call creates it (so
// that the reply knows it was created: memcached answers a creation even
// under q). Then, for t or T, its expiry is read or changed.
void Connection::metaArithmetic(std::shared_ptr<const MetaRequest> r, bool create) {
    engine::ArithmeticRequest arithmetic;
    arithmetic.key = r->key;
    arithmetic.vbid = textVbid(arithmetic.key);
    arithmetic.increment = r->mode != 'D' && r->mode != '-';
    arithmetic.delta = r->delta;
    arithmetic.cas = r->compareCas.value_or(0);
    arithmetic.createIfMissing = create;
    arithmetic.initial = r->initial;
    arithmetic.expiry = create ? absoluteExpiry(*r->vivifyTtl) : 0;
    auto done =
        completion<engine::ArithmeticResult>([this, r, create](const engine::ArithmeticResult& a) {
            switch (a.status) {
                case engine::Status::Success:
                    return metaCounterExpiry(r, a, create);
                case engine::Status::KeyNotFound:
                    if (r->vivifyTtl && !create) {
                        return metaArithmetic(r, true);
                    }
                    out_ += statusLine("NF", *r);
                    return;
                case engine::Status::KeyExists:
                    out_ += statusLine("EX", *r);
                    return;
                case engine::Status::DeltaBadValue:
                    out_ += "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n";
                    return;
                default:
                    out_ += textServerError(a.status);
            }
        });
    callEngine([&] { bucket().arithmetic(std::move(arithmetic), std::move(done)); });
}

void Connection::metaCounterExpiry(std::shared_ptr<const MetaRequest> r,
                                   const engine::ArithmeticResult& a, bool created) {
    Found found{std::to_string(a.value), 0, a.cas, 0, 0, false};
    const bool quietNow = r->quiet && !created;
    if (!r->ttl && !r->has('t')) {
        out_ += quietNow ? "" : foundReply(*r, found, false);
        return;
    }
    // T changes the expiry (touch, which returns it), t only reads it.
    const auto key = r->key;
    auto done = completion<engine::GetResult>(
        [this, r, found = std::move(found), quietNow](const engine::GetResult& g) mutable {
            if (g.status != engine::Status::Success) {
                out_ += textServerError(g.status);  // gone right after the update: a race
                return;
            }
            found.before = found.touched = g.item.meta.expiry;
            if (r->ttl) {
                found.cas = g.item.meta.cas;
            }
            out_ += quietNow ? "" : foundReply(*r, found, false);
        });
    callEngine([&] {
        const auto vbid = textVbid(key);
        if (r->ttl) {
            bucket().touch(vbid, key, absoluteExpiry(*r->ttl), std::move(done));
        } else {
            bucket().getMeta(vbid, key, std::move(done));
        }
    });
}

void Connection::metaDebug(const MetaRequest& request) {
    auto done = completion<engine::GetResult>(
        [this, r = std::make_shared<const MetaRequest>(request)](const engine::GetResult& got) {
            if (got.status != engine::Status::Success) {
                out_ += got.status == engine::Status::KeyNotFound ? std::string_view("EN\r\n")
                                                                  : textServerError(got.status);
                return;
            }
            const auto& meta = got.item.meta;
            // memcached's exp: -1 for none, else now - expiry (negative while live).
            const std::int64_t exp =
                meta.expiry == 0 ? -1 : static_cast<std::int64_t>(unixNow()) - meta.expiry;
            const std::string key = r->base64Key ? protocol::encodeBase64(r->key) : r->key;
            out_ += "ME " + key + " exp=" + std::to_string(exp) +
                    " cas=" + std::to_string(meta.cas) + " vbid=" + std::to_string(got.item.vbid) +
                    " seqno=" + std::to_string(meta.seqno) +
                    " flags=" + std::to_string(meta.flags) +
                    " value_bytes=" + std::to_string(got.item.value.size()) + "\r\n";
        });
    callEngine([&] { bucket().get(textVbid(request.key), request.key, std::move(done)); });
}

void Connection::textGetAndTouch(const TextCommand& command) {
    const bool withCas = command.verb == TextVerb::Gats;
    const std::uint32_t expiry = absoluteExpiry(command.exptime);
    for (std::string_view key : command.keys) {
        counters_->cmdTouch.fetch_add(1, std::memory_order_relaxed);
        auto done = completion<engine::GetResult>(
            [this, withCas, name = std::string(key)](const engine::GetResult& r) {
                if (r.status != engine::Status::Success) {
                    return;
                }
                out_ += "VALUE " + name + " " + std::to_string(r.item.meta.flags) + " " +
                        std::to_string(documentBody(r.item).size()) +
                        (withCas ? " " + std::to_string(r.item.meta.cas) : "") + "\r\n" +
                        std::string(documentBody(r.item)) + "\r\n";
            });
        callEngine(
            [&] { bucket().touch(textVbid(key), std::string(key), expiry, std::move(done)); });
    }
    out_ += "END\r\n";
}

}  // namespace kvexec::server
