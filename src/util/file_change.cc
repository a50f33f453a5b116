#include "gpusched/util/file_change.h"

#include <sys/stat.h>

#include <exception>

namespace gpusched {

FileChange::FileChange(std::string path, Reader read)
    : path_(std::move(path)), read_(std::move(read)) {}

const FileChange::Look* FileChange::Check() {
  Look seen;
  try {
    seen.text = read_(path_);
  } catch (const std::exception& e) {  // FileError; bad_alloc must not end the process either
    seen.problems.Add(e.what());
    seen.identity = FileIdentity(path_);
  }
  if (last_ && seen == *last_) return nullptr;
  last_ = std::move(seen);
  return &*last_;
}

std::string FileIdentity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && ::lstat(path.c_str(), &st) != 0) return "";
  return std::to_string(st.st_dev) + ':' + std::to_string(st.st_ino) + ':' +
         std::to_string(st.st_size) + ':' + std::to_string(st.st_mtim.tv_sec) + '.' +
         std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace gpusched
