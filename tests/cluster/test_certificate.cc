#include "test_certificate.h"

#include <cstdlib>

namespace kvexec::test {

bool makeCertificate(const std::string& dir, const std::string& name,
                     const std::string& subjectAltName) {
    const std::string command =
        "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj '/CN=kvexec test " + name +
        "' -addext 'subjectAltName=" + subjectAltName + "' -keyout '" + dir + "/" + name +
        ".key' -out '" + dir + "/" + name + ".pem' 2>/dev/null";
    return std::system(command.c_str()) == 0;
}

}  // namespace kvexec::test
