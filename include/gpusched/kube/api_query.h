// The request line of an API server GET: a collection path with its query parameters, each value
// percent-encoded where Kubernetes' tokens (continue, resourceVersion) may need it.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace gpusched {

// `path`, then the non-empty `params` ("limit=500") joined with '?' and '&', as given.
std::string ApiQuery(std::string_view path, std::initializer_list<std::string> params);
// `s` with every byte but letters, digits and -_.~ written as %XX (RFC 3986 unreserved).
std::string UrlEncode(std::string_view s);

}  // namespace gpusched
