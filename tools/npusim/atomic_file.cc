// Atomic file output and whole-file input.
#include "atomic_file.h"

#include <iostream>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "error.h"

namespace npusim {

namespace {

// Where writing `path` lands: a link's target (followed through links, a
// relative one from the link's folder), so that the link stays a link and
// its target is what changes; else `path`.
std::string link_target(const std::string &path)
{
    namespace fs = std::filesystem;
    fs::path p = path;
    std::error_code ec;
    for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, ec)); hops++) {
        const fs::path to = fs::read_symlink(p, ec);
        if (ec)
            break;
        p = to.is_absolute() ? to : p.parent_path() / to;
    }
    return p.string();
}

// The descriptor of this process that `path` names (/dev/stdout, /dev/fd/N,
// /proc/self/fd/N, or a link to one of them), or -1. Such a path is a link to
// whatever the descriptor has open; opening it again would truncate a file
// the shell opened for appending, and renaming over it would replace that
// file under the descriptor, so it is written through the descriptor.
int own_descriptor(const std::string &path)
{
    namespace fs = std::filesystem;
    const std::string fds = "/proc/" + std::to_string(getpid()) + "/fd/";
    fs::path p = path;
    std::error_code ec;
    for (int hops = 0; hops < 40; hops++) {
        const fs::path dir = fs::canonical(fs::absolute(p, ec).parent_path(), ec);
        if (ec)
            return -1;
        const std::string here = (dir / p.filename()).string();
        if (here.compare(0, fds.size(), fds) == 0) {
            const std::string digits = here.substr(fds.size());
            if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
                return -1;
            return int(std::stol(digits));
        }
        if (!fs::is_symlink(fs::symlink_status(p, ec)))
            return -1;
        const fs::path to = fs::read_symlink(p, ec);
        if (ec)
            return -1;
        p = to.is_absolute() ? to : p.parent_path() / to;
    }
    return -1;
}

// A file that is not a plain file or a folder (a device such as /dev/null, a
// FIFO, a socket): written in place, since renaming over it would replace it.
bool is_special(const std::string &path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

}  // namespace

OutputPlace output_place(const std::string &given)
{
    OutputPlace p;
    p.path = given;
    if ((p.fd = own_descriptor(given)) >= 0)
        p.how = OutputPlace::How::descriptor;
    else if (is_special(given))
        p.how = OutputPlace::How::in_place;
    else
        p.path = link_target(given);
    return p;
}

FILE *open_place(const OutputPlace &place)
{
    if (place.how == OutputPlace::How::rename)
        return std::fopen(temp_path(place.path).c_str(), "wb");
    if (place.how == OutputPlace::How::in_place)
        return std::fopen(place.path.c_str(), "wb");
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    const int fd = dup(place.fd);
    FILE *f = fd < 0 ? nullptr : fdopen(fd, "wb");
    if (!f && fd >= 0) {
        const int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

namespace {

// Writes the output `given` where output_place puts it: `fill` writes its
// bytes to the stream (0, or an errno); a renamed output is flushed to disk,
// renamed over its place, and dead temporaries beside it are removed.
void write_place(const std::string &given, const std::function<int(FILE *)> &fill)
{
    const OutputPlace place = output_place(given);
    const bool renamed = place.how == OutputPlace::How::rename;
    FILE *f = open_place(place);
    if (!f)
        throw Error(given + ": cannot write: " + std::strerror(errno));
    int e = fill(f);
    if (!e && (std::fflush(f) != 0 || (renamed && fsync(fileno(f)) != 0)))
        e = errno ? errno : EIO;
    if (std::fclose(f) != 0 && !e)
        e = errno ? errno : EIO;
    const std::string tmp = temp_path(place.path);
    if (e) {
        if (renamed)
            std::remove(tmp.c_str());
        throw Error(given + ": write failed: " + std::strerror(e));
    }
    if (!renamed)
        return;
    if (std::rename(tmp.c_str(), place.path.c_str()) != 0) {
        e = errno;
        std::remove(tmp.c_str());
        throw Error(given + ": cannot rename into place: " + std::strerror(e));
    }
    remove_stale_temps(place.path);
}

}  // namespace

void copy_to_output(const std::string &from, const std::string &given)
{
    FILE *in = std::fopen(from.c_str(), "rb");
    if (!in)
        throw Error(from + ": cannot open: " + std::strerror(errno));
    std::unique_ptr<FILE, int (*)(FILE *)> closer(in, std::fclose);
    write_place(given, [in](FILE *out) {
        std::vector<char> buf(1 << 20);
        for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), in)) > 0;)
            if (std::fwrite(buf.data(), 1, n, out) != n)
                return errno ? errno : EIO;
        return std::ferror(in) ? EIO : 0;
    });
}

void write_file_atomic(const std::string &given, const std::string &data)
{
    write_place(given, [&data](FILE *f) {
        return std::fwrite(data.data(), 1, data.size(), f) == data.size() ? 0 : errno ? errno : EIO;
    });
}

namespace {

// Which process numbers this process can ask about: a hash of the host's
// name, its boot and the PID namespace. Temporaries of shards on other hosts
// sharing a folder (or in other containers) carry another tag, and are never
// judged by a PID that means another process here.
const std::string &host_tag()
{
    static const std::string tag = [] {
        std::string what;
        char host[256] = "";
        if (gethostname(host, sizeof host - 1) == 0)
            what += host;
        std::ifstream boot("/proc/sys/kernel/random/boot_id");
        std::string id;
        std::getline(boot, id);
        what += "\n" + id + "\n";
        char ns[64] = "";
        const ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
        what += std::string(ns, n > 0 ? size_t(n) : 0);
        uint64_t h = 0xcbf29ce484222325u;
        for (const char c : what)
            h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3u;
        char hex[9];
        std::snprintf(hex, sizeof hex, "%08x", unsigned(h ^ (h >> 32)));
        return std::string(hex);
    }();
    return tag;
}

}  // namespace

std::string temp_path(const std::string &path, long pid)
{
    return path + ".tmp." + host_tag() + "-" + std::to_string(pid < 0 ? long(getpid()) : pid);
}

void remove_stale_temps(const std::string &path, const std::string &suffix)
{
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "./" : path.substr(0, slash + 1);
    const std::string prefix =
        (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp." + host_tag() + "-";
    DIR *d = opendir(dir.c_str());
    if (!d)
        return;
    while (const dirent *e = readdir(d)) {
        const std::string name = e->d_name;
        if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
            continue;
        const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
        if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
            continue;
        const pid_t pid = pid_t(std::stol(digits));
        if (pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH)
            std::remove((dir + name).c_str());
    }
    closedir(d);
}

std::string read_file(const std::string &path)
{
    // A folder opens as a stream that reads nothing: it would pass for an empty file.
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        throw Error(path + ": cannot open: " + std::strerror(EISDIR));
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(path + ": cannot open: " + std::strerror(errno));
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad())
        throw Error(path + ": read failed");
    return ss.str();
}

namespace {

// Why `path` could not be written as write_file_atomic writes it (a new file
// in its folder, renamed over it), or 0.
int cannot_write(const std::string &given)
{
    struct stat st;
    if (stat(given.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        return EISDIR;
    if (const int fd = own_descriptor(given); fd >= 0) {
        const int flags = fcntl(fd, F_GETFL);
        return flags < 0 ? errno : (flags & O_ACCMODE) == O_RDONLY ? EBADF : 0;
    }
    if (is_special(given))
        return access(given.c_str(), W_OK) == 0 ? 0 : errno;
    const std::string path = link_target(given);
    std::string dir = std::filesystem::path(path).parent_path().string();
    if (dir.empty())
        dir = ".";
    if (stat(dir.c_str(), &st) != 0)
        return errno;
    if (!S_ISDIR(st.st_mode))
        return ENOTDIR;
    if (access(dir.c_str(), W_OK | X_OK) != 0)
        return errno;
    // The temporary beside it, `NAME.tmp.PID`, must be a name the folder
    // takes: a name that fits alone failed only after the run.
    const std::string tmp = temp_path(path, 4194304);  // the longest PID Linux gives
    const long name_max = pathconf(dir.c_str(), _PC_NAME_MAX);
    if (tmp.size() >= PATH_MAX ||
        (name_max > 0 && std::filesystem::path(tmp).filename().string().size() > size_t(name_max)))
        return ENAMETOOLONG;
    return 0;
}

// One spelling per file: absolute, its folder's links resolved and . and ..
// taken out (x.json, ./x.json and $PWD/x.json alike, existing or not).
std::filesystem::path normal_path(const std::string &path)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path abs = fs::absolute(path, ec);
    if (ec)
        return fs::path(path).lexically_normal();
    const fs::path dir = fs::weakly_canonical(abs.parent_path(), ec);
    return ec ? abs.lexically_normal() : dir / abs.filename();
}

bool same_file(const std::filesystem::path &a, const std::filesystem::path &b)
{
    if (a == b)
        return true;
    std::error_code ec;
    return std::filesystem::equivalent(a, b, ec) && !ec;  // a link and its target (false unless both exist)
}

}  // namespace

namespace {

void check_not_an_input(const std::string &flag, const std::string &path, const std::filesystem::path &key,
                        const std::vector<std::pair<std::string, std::string>> &inputs)
{
    for (const auto &[what, input] : inputs)
        if (!input.empty() && same_file(key, normal_path(input)))
            throw Error(path + ": named by both " + what + " and " + flag +
                        " (an output cannot replace a file it is made from)");
}

}  // namespace

void check_output_paths(const std::vector<std::pair<std::string, std::string>> &outputs,
                        const std::vector<std::pair<std::string, std::string>> &inputs)
{
    std::vector<std::pair<std::filesystem::path, const std::string *>> seen;  // normal path, its flag
    for (const auto &[flag, path] : outputs) {
        if (path == "-" && flag != "--json" && flag != "--csv") {  // the only ones write_output sends to stdout
            const bool named = flag.rfind("--output ", 0) == 0;   // "--output y": given as y=-
            throw Error((named ? flag + "=-" : flag + " -") +
                        ": this output is written to a file, not to standard output (- is standard output for "
                        "--json and --csv only; ./- names a file called -)");
        }
        if (path.empty() || path == "-")
            continue;
        if (int e = cannot_write(path))
            throw Error(path + ": cannot write: " + std::strerror(e));
        const std::filesystem::path key = normal_path(path);
        check_not_an_input(flag, path, key, inputs);
        for (const auto &[other, other_flag] : seen)
            if (same_file(key, other))
                throw Error(path + ": named by both " + *other_flag + " and " + flag +
                            " (each output needs a file of its own)");
        seen.emplace_back(key, &flag);
    }
}

void check_inputs_kept(const std::vector<std::pair<std::string, std::string>> &outputs,
                       const std::vector<std::pair<std::string, std::string>> &inputs)
{
    for (const auto &[flag, path] : outputs)
        if (!path.empty() && path != "-")
            check_not_an_input(flag, path, normal_path(path), inputs);
}

void write_output(const std::string &path, const std::string &text)
{
    if (path == "-")
        std::cout << text;
    else
        write_file_atomic(path, text);
}

}  // namespace npusim
