#include "engine/vbucket_state_file.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "engine/durable_file.h"

namespace kvexec::engine {
namespace {

using nlohmann::json;

VBucketState stateNamed(const std::string& name) {
    for (const auto state :
         {VBucketState::Active, VBucketState::Replica, VBucketState::Pending, VBucketState::Dead}) {
        if (to_string(state) == name) {
            return state;
        }
    }
    throw std::invalid_argument("unknown vBucket state \"" + name + "\"");
}

PersistedVBucket vbucketFromJson(const json& doc) {
    PersistedVBucket vb;
    vb.state = stateNamed(doc.at("state").get<std::string>());
    vb.topology.chain = doc.at("topology").get<std::vector<std::string>>();
    std::vector<FailoverEntry> entries;
    for (const auto& entry : doc.at("failover")) {
        entries.push_back({entry.at("uuid").get<std::uint64_t>(), entry.at("seqno").get<Seqno>()});
    }
    vb.failover = FailoverLog(std::move(entries));
    vb.purgeSeqno = doc.value("purgeSeqno", Seqno{0});  // absent in older files
    return vb;
}

json vbucketToJson(const PersistedVBucket& vb) {
    json failover = json::array();
    for (const auto& entry : vb.failover.entries()) {
        failover.push_back({{"uuid", entry.uuid}, {"seqno", entry.seqno}});
    }
    return {{"state", to_string(vb.state)},
            {"topology", vb.topology.chain},
            {"failover", failover},
            {"purgeSeqno", vb.purgeSeqno}};
}

}  // namespace

std::optional<PersistedVBuckets> loadVBucketStates(const std::filesystem::path& dir,
                                                   std::size_t numVBuckets) {
    const auto path = dir / kVBucketStateFileName;
    const auto bytes = readFileIfPresent(path);
    if (!bytes) {
        return std::nullopt;
    }
    PersistedVBuckets states;
    try {
        const auto doc = json::parse(*bytes);
        states.cleanShutdown = doc.at("shutdown").get<std::string>() == "clean";
        for (const auto& vb : doc.at("vbuckets")) {
            states.vbuckets.push_back(vbucketFromJson(vb));
        }
    } catch (const std::exception& error) {
        throw std::runtime_error("the vBucket states " + path.string() +
                                 " are damaged: " + error.what());
    }
    if (states.vbuckets.size() != numVBuckets) {
        throw std::runtime_error("the vBucket states " + path.string() + " hold " +
                                 std::to_string(states.vbuckets.size()) +
                                 " vBuckets, the bucket has " + std::to_string(numVBuckets));
    }
    return states;
}

void saveVBucketStates(const std::filesystem::path& dir, const PersistedVBuckets& states) {
    json vbuckets = json::array();
    for (const auto& vb : states.vbuckets) {
        vbuckets.push_back(vbucketToJson(vb));
    }
    const json doc = {{"shutdown", states.cleanShutdown ? "clean" : "running"},
                      {"vbuckets", vbuckets}};
    replaceFileDurably(dir / kVBucketStateFileName, doc.dump() + "\n");
}

}  // namespace kvexec::engine
