#include "pillowfight/cluster_route.h"

#include <nlohmann/json.hpp>

namespace kvexec::pillowfight {

std::optional<ClusterRoute> routeOf(std::string_view clusterMap) {
    const auto json = nlohmann::json::parse(clusterMap, nullptr, false);
    if (json.is_discarded() || !json.is_object()) {
        return std::nullopt;
    }
    const auto map = json.find("vBucketServerMap");
    if (map == json.end() || !map->is_object()) {
        return std::nullopt;
    }
    const auto vbuckets = map->find("vBucketMap");
    if (vbuckets == map->end() || !vbuckets->is_array() || vbuckets->empty() ||
        vbuckets->size() > 65535) {
        return std::nullopt;
    }
    ClusterRoute route;
    if (const auto rev = json.find("rev"); rev != json.end() && rev->is_number_unsigned()) {
        route.revision = rev->get<std::uint64_t>();
    }
    if (const auto servers = map->find("serverList");
        servers != map->end() && servers->is_array()) {
        for (const auto& server : *servers) {
            if (!server.is_string()) {
                return std::nullopt;
            }
            route.servers.push_back(server.get<std::string>());
        }
    }
    for (const auto& chain : *vbuckets) {
        int active = -1;
        if (chain.is_array() && !chain.empty() && chain[0].is_number_integer()) {
            active = chain[0].get<int>();
        }
        if (active < -1 || active >= static_cast<int>(route.servers.size())) {
            return std::nullopt;
        }
        route.activeOf.push_back(active);
    }
    return route;
}

std::optional<std::uint16_t> vbucketCountOf(std::string_view clusterMap) {
    const auto route = routeOf(clusterMap);
    if (!route) {
        return std::nullopt;
    }
    return route->vbucketCount();
}

}  // namespace kvexec::pillowfight
