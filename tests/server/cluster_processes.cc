#include "server/cluster_processes.h"

#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "protocol/binary_response.h"
#include "protocol/client_codec.h"
#include "protocol/keys.h"

namespace kvexec::server::test {
namespace {

using protocol::Opcode;
using Clock = std::chrono::steady_clock;

constexpr auto kSuccess = static_cast<std::uint16_t>(protocol::Status::Success);
constexpr auto kAmbiguous = static_cast<std::uint16_t>(protocol::Status::SyncWriteAmbiguous);

std::uint16_t portOfServer(const std::string& server) {
    return static_cast<std::uint16_t>(std::stoi(server.substr(server.rfind(':') + 1)));
}

}  // namespace

RawRequest durableSet(const std::string& key, const std::string& value,
                      protocol::DurabilityLevel level, std::uint16_t timeoutMs,
                      std::uint16_t vbuckets, std::uint32_t expiry) {
    std::string extras(4, '\0');  // flags
    protocol::appendBe32(extras, expiry);
    RawRequest r = request(Opcode::Set, key, extras, value);
    r.magic = 0x08;
    r.framing = protocol::durabilityFrame(level, timeoutMs);
    r.vbucket = protocol::vbucketOfKey(key, vbuckets);
    return r;
}

bool waitUntilStopped(pid_t pid) {
    const auto deadline = Clock::now() + kSocketDeadline;
    const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
    while (Clock::now() < deadline) {
        bool allStopped = true;
        for (const auto& task : std::filesystem::directory_iterator(tasks)) {
            std::ifstream stat(task.path() / "stat");
            std::string line;
            std::getline(stat, line);
            const auto close = line.rfind(')');
            const char state = close + 2 < line.size() ? line[close + 2] : '?';
            allStopped = allStopped && (state == 'T' || state == 't');
        }
        if (allStopped) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
}

int runClusterTool(const std::string& etcdUrl, const std::string& arguments) {
    const std::string command = std::string(KVEXEC_CLUSTER_BINARY) + " --etcd " + etcdUrl + " " +
                                arguments + " > /dev/null 2>&1";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

ClusterProcesses::ClusterProcesses(std::size_t nodes, std::uint32_t replicas,
                                   std::uint16_t vbuckets, std::vector<std::string> extraArgs,
                                   cluster::test::EtcdScheme etcdScheme)
    : replicas_(replicas),
      vbuckets_(vbuckets),
      extraArgs_(std::move(extraArgs)),
      etcd_(cluster::test::EtcdProcess::defaultBinary(), etcdScheme) {
    for (std::size_t i = 0; i < nodes; ++i) {
        dirs_.push_back(std::make_unique<TempDir>());
        nodes_.push_back(std::make_unique<ServerProcess>(dirs_[i]->path(), args(i)));
    }
}

bool ClusterProcesses::stopAll() {
    bool clean = true;
    for (auto& node : nodes_) {
        if (node) {
            ::kill(node->pid(), SIGCONT);
            clean = node->stop(SIGTERM) == 0 && clean;
            node.reset();
        }
    }
    return clean;
}

std::vector<std::string> ClusterProcesses::args(std::size_t node) const {
    std::string name = "n";
    name += std::to_string(node);
    std::vector<std::string> args{"--cluster",  etcd_.url(),
                                  "--node",     name,
                                  "--replicas", std::to_string(replicas_),
                                  "--vbuckets", std::to_string(vbuckets_),
                                  "--sync",     "none"};
    if (etcd_.endpoint().tls) {
        args.insert(args.end(), {"--etcd-ca", etcd_.caFile()});
    }
    args.insert(args.end(), extraArgs_.begin(), extraArgs_.end());
    return args;
}

std::size_t ClusterProcesses::indexOf(std::uint16_t port) const {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (nodes_[i] && nodes_[i]->port() == port) {
            return i;
        }
    }
    throw std::out_of_range("no running node listens on port " + std::to_string(port));
}

void ClusterProcesses::kill(std::size_t i) {
    nodes_.at(i)->stop(SIGKILL);
    nodes_[i].reset();
}

void ClusterProcesses::restart(std::size_t i) {
    nodes_.at(i).reset();
    nodes_[i] = std::make_unique<ServerProcess>(dirs_.at(i)->path(), args(i));
}

std::size_t ClusterProcesses::addNode() {
    const std::size_t i = nodes_.size();
    dirs_.push_back(std::make_unique<TempDir>());
    nodes_.push_back(std::make_unique<ServerProcess>(dirs_[i]->path(), args(i)));
    return i;
}

std::unique_ptr<Client> ClusterProcesses::connect(std::uint16_t port) const {
    auto client = std::make_unique<Client>(port);
    if (!bucket_.empty()) {
        const auto selected = client->call(request(Opcode::SelectBucket, bucket_));
        if (!selected || selected->status != kSuccess) {
            return nullptr;
        }
    }
    return client;
}

nlohmann::json ClusterProcesses::config(std::uint16_t port) {
    const auto client = connect(port);
    if (!client) {
        return {};
    }
    const auto answer = client->call(request(Opcode::GetClusterConfig));
    if (!answer || answer->status != kSuccess) {
        return {};
    }
    return nlohmann::json::parse(answer->value, nullptr, false);
}

bool ClusterProcesses::serves(const nlohmann::json& config,
                              const std::vector<std::size_t>& members) const {
    if (!config.is_object() || config.value("rev", 0) <= 0) {
        return false;
    }
    const auto& servers = config["vBucketServerMap"]["serverList"];
    std::size_t listed = 0;
    for (const std::size_t member : members) {
        for (const auto& server : servers) {
            listed += portOfServer(server.get<std::string>()) == nodes_.at(member)->port() ? 1 : 0;
        }
    }
    return servers.size() == members.size() && listed == members.size();
}

bool ClusterProcesses::waitForMap(std::optional<std::vector<std::size_t>> members) {
    if (!members) {
        members.emplace();
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            if (nodes_[i]) {
                members->push_back(i);
            }
        }
    }
    const auto deadline = Clock::now() + kSocketDeadline;
    while (Clock::now() < deadline) {
        std::optional<nlohmann::json> agreed;
        bool same = true;
        for (const auto& node : nodes_) {
            if (!node) {
                continue;
            }
            nlohmann::json served = config(node->port());
            same =
                same && serves(served, *members) && (!agreed || (*agreed)["rev"] == served["rev"]);
            agreed = std::move(served);
        }
        if (same && agreed) {
            map_ = (*agreed)["vBucketServerMap"];
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

std::uint16_t ClusterProcesses::portOf(const std::string& key, std::size_t slot) const {
    const auto vb = protocol::vbucketOfKey(key, vbuckets_);
    const int index = map_["vBucketMap"][vb][slot].get<int>();
    return index < 0 ? 0 : portOfServer(map_["serverList"][index].get<std::string>());
}

std::optional<BinaryResponse> ClusterProcesses::writeOnceReplicated(const std::string& key,
                                                                    const std::string& value,
                                                                    protocol::DurabilityLevel level,
                                                                    std::uint32_t expiry) {
    const auto deadline = Clock::now() + kSocketDeadline;
    std::optional<BinaryResponse> answer;
    while (Clock::now() < deadline) {
        const auto client = connect(portOf(key, 0));
        if (!client) {
            return std::nullopt;
        }
        answer = client->call(durableSet(key, value, level, 1000, vbuckets_, expiry));
        if (answer && answer->status != kAmbiguous) {
            return answer;
        }
    }
    return answer;
}

std::optional<BinaryResponse> ClusterProcesses::readWhenItHolds(const std::string& key,
                                                                std::size_t slot,
                                                                const std::string& value) {
    RawRequest get = request(slot == 0 ? Opcode::Get : Opcode::GetReplica, key);
    get.vbucket = protocol::vbucketOfKey(key, vbuckets_);
    const auto deadline = Clock::now() + kSocketDeadline;
    std::optional<BinaryResponse> copy;
    while (Clock::now() < deadline) {
        const auto client = connect(portOf(key, slot));
        if (!client) {
            return std::nullopt;
        }
        copy = client->call(get);
        if (copy && copy->status == kSuccess && copy->value == value) {
            break;
        }
    }
    return copy;
}

}  // namespace kvexec::server::test
