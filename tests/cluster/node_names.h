// node_names.h: node names for the cluster tests' maps: node0, node1, ...
#pragma once

#include <string>
#include <vector>

namespace kvexec::cluster::test {

inline std::vector<std::string> names(int count) {
    std::vector<std::string> nodes;
    for (int i = 0; i < count; ++i) {
        std::string name = "node";
        name += std::to_string(i);
        nodes.push_back(name);
    }
    return nodes;
}

}  // namespace kvexec::cluster::test
