#include "cluster/etcd_types.h"

#include <charconv>

namespace kvexec::cluster {

std::string EtcdEndpoint::url() const {
    std::string url = tls ? "https://" : "http://";
    const bool v6 = host.find(':') != std::string::npos;
    url += v6 ? "[" : "";
    url += host;
    url += v6 ? "]:" : ":";
    url += std::to_string(port);
    return url;
}

EtcdEndpoint parseEtcdUrl(const std::string& url, const std::string& caFile) {
    const auto bad = [&url](std::string_view why) {
        std::string message = "etcd URL '";
        message += url;
        message += "': ";
        message += why;
        return std::invalid_argument(message);
    };
    const bool tls = url.rfind("https://", 0) == 0;
    if (!tls && url.rfind("http://", 0) != 0) {
        throw bad("expected http://HOST:PORT or https://HOST:PORT");
    }
    if (!tls && !caFile.empty()) {
        throw bad("a CA file goes with https://");
    }
    std::string_view rest = std::string_view(url).substr(tls ? 8 : 7);
    if (!rest.empty() && rest.back() == '/') {
        rest.remove_suffix(1);
    }
    const auto colon = rest.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
        throw bad("expected HOST:PORT after the scheme");
    }
    std::string_view host = rest.substr(0, colon);
    if (host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    const std::string_view portText = rest.substr(colon + 1);
    unsigned port = 0;
    const auto [end, error] =
        std::from_chars(portText.data(), portText.data() + portText.size(), port);
    if (error != std::errc() || end != portText.data() + portText.size() || port == 0 ||
        port > 65535 || host.empty()) {
        throw bad("bad host or port");
    }
    return EtcdEndpoint{std::string(host), static_cast<std::uint16_t>(port), tls, caFile};
}

}  // namespace kvexec::cluster
