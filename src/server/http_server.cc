#include "gpusched/server/http_server.h"

#include <utility>

namespace gpusched {

HttpServer::HttpServer(ServerOptions options, const ExtenderService& service,
                       std::function<Readiness()> readiness, Metrics* metrics)
    : routes_(options, service, std::move(readiness), metrics),
      transport_(std::move(options), routes_.handlers()) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::AddGetRoute(std::string path, std::function<HttpResponse()> handler) {
  routes_.AddGetRoute(std::move(path), std::move(handler));
}

void HttpServer::AddPostRoute(std::string path, HttpRoutes::PostHandler handler) {
  routes_.AddPostRoute(std::move(path), std::move(handler));
}

int HttpServer::Bind() { return transport_.Bind(); }

void HttpServer::Run() { transport_.Run(); }

void HttpServer::Stop() {
  routes_.Stop();
  transport_.Stop();
}

size_t HttpServer::connection_count() const { return transport_.connection_count(); }

}  // namespace gpusched
