// systemc_engine(): elaborate the top, run sc_start(), write the VCD into
// place. Everything SystemC prints goes to stderr, never stdout (reports are
// often JSON on stdout).
#include "npusim/systemc/engine.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npusim/systemc/top.h"

#if defined(__SANITIZE_ADDRESS__)
#define NPUSIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NPUSIM_ASAN 1
#endif
#endif
#ifdef NPUSIM_ASAN
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace npusim {
namespace {

// SystemC 2.3.4 notes its switch back to sc_start's caller as a switch to a
// stack of size 0 (its main coroutine never records the real one), so after
// sc_start AddressSanitizer knows no stack for the main thread: LeakSanitizer
// would not scan it at exit and a C++ throw could not unpoison it. Tell ASan
// the main thread's own stack again. Nothing to do in other builds.
void restore_main_stack_for_asan()
{
#ifdef NPUSIM_ASAN
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    void *bottom = nullptr;
    size_t size = 0;
    const int got = pthread_attr_getstack(&attr, &bottom, &size);
    pthread_attr_destroy(&attr);
    if (got != 0)
        return;
    void *fake_stack = nullptr;
    __sanitizer_start_switch_fiber(&fake_stack, bottom, size);
    __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
}

void report_to_stderr(const sc_core::sc_report &rep, const sc_core::sc_actions &actions)
{
    // Infos (e.g. "tracing timescale unit set") are noise to a CLI user.
    if ((actions & sc_core::SC_DISPLAY) && rep.get_severity() != sc_core::SC_INFO)
        std::fprintf(stderr, "npusim: systemc: %s\n", sc_core::sc_report_compose_message(rep).c_str());
    sc_core::sc_report_handler::default_handler(rep, actions & ~(sc_core::SC_DISPLAY | sc_core::SC_LOG));
}

// SystemC appends ".vcd" to the name it is given; the file is written under a
// temporary name and renamed into place after a complete run. A path that is
// a device or FIFO (renaming over it would replace it: as root, /dev/null)
// gets the VCD copied into it from a temporary under $TMPDIR.
struct VcdFile {
    std::string path, base, written;
    bool special = false;
    sc_core::sc_trace_file *tf = nullptr;

    VcdFile(const std::string &p, const std::string &temp) : path(p)
    {
        if (path.empty())
            return;
        struct stat st;
        special = stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
        if (special) {
            const char *tmpdir = std::getenv("TMPDIR");
            base = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/npusim-vcd-" + std::to_string(getpid()) +
                   "-" + std::to_string(uintptr_t(this));
        } else {
            base = temp.empty() ? path + ".tmp." + std::to_string(getpid()) : temp;
        }
        written = base + ".vcd";
        // SystemC opens the file only when simulation starts; fail early and clearly.
        FILE *probe = std::fopen(written.c_str(), "w");
        if (!probe)
            throw VcdFileError(path + ": cannot write: " + std::strerror(errno));
        std::fclose(probe);
        tf = sc_core::sc_create_vcd_trace_file(base.c_str());
        tf->set_time_unit(1, sc_core::SC_NS);  // one cycle per VCD time unit
    }
    void commit()
    {
        if (!tf)
            return;
        // SystemC ends the file with the time it is closed at, and does not
        // check its writes: a file that ends otherwise was cut (a full disk,
        // a file size limit) and must not take the final name.
        const auto end = uint64_t(sc_core::sc_time_stamp() / sc_core::sc_time(1, sc_core::SC_NS));
        sc_core::sc_close_vcd_trace_file(tf);
        tf = nullptr;
        std::string error;
        if (!ends_with_line(written, "#" + std::to_string(end)))
            error = "the VCD was not written whole (disk full or a file size limit?)";
        else if (special)
            error = copy_into(written, path);
        else if (!fsync_file(written))
            error = std::string("cannot flush to disk: ") + std::strerror(errno);
        else if (std::rename(written.c_str(), path.c_str()) != 0)
            error = std::string("cannot rename into place: ") + std::strerror(errno);
        if (special || !error.empty())
            std::remove(written.c_str());
        if (!error.empty())
            throw VcdFileError(path + ": " + error);
    }
    // Copies `from` into the device or FIFO `to`: "" or what went wrong.
    static std::string copy_into(const std::string &from, const std::string &to)
    {
        FILE *in = std::fopen(from.c_str(), "rb");
        if (!in)
            return std::string("cannot read the VCD back: ") + std::strerror(errno);
        FILE *out = std::fopen(to.c_str(), "wb");
        if (!out) {
            const int e = errno;
            std::fclose(in);
            return std::string("cannot write: ") + std::strerror(e);
        }
        char buf[1 << 16];
        int e = 0;
        for (size_t n; !e && (n = std::fread(buf, 1, sizeof buf, in)) > 0;)
            if (std::fwrite(buf, 1, n, out) != n)
                e = errno ? errno : EIO;
        if (std::fclose(out) != 0 && !e)
            e = errno ? errno : EIO;
        std::fclose(in);
        return e ? std::string("write failed: ") + std::strerror(e) : std::string();
    }
    // True when the file's last line is `line`.
    static bool ends_with_line(const std::string &file, const std::string &line)
    {
        FILE *f = std::fopen(file.c_str(), "rb");
        if (!f)
            return false;
        const std::string want = "\n" + line + "\n";
        std::string tail(want.size(), '\0');
        const bool ok = std::fseek(f, -long(want.size()), SEEK_END) == 0 &&
                        std::fread(&tail[0], 1, tail.size(), f) == tail.size() && tail == want;
        std::fclose(f);
        return ok;
    }
    static bool fsync_file(const std::string &file)
    {
        const int fd = open(file.c_str(), O_RDONLY);
        const bool ok = fd >= 0 && fsync(fd) == 0;
        if (fd >= 0)
            close(fd);
        return ok;
    }
    ~VcdFile()
    {
        if (tf)
            std::remove(written.c_str());
    }
};

// libsystemc's main() prints the copyright banner (to stderr) before it
// calls sc_main, unless SC_COPYRIGHT_MESSAGE=DISABLE is already set: sc_main
// is too late, so this runs as a constructor, before main(), in every binary
// that links the engine.
__attribute__((constructor)) void disable_banner() { setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1); }

void run_systemc(const ScOptions &opts, npu_timed_core *const *cores, unsigned n, const npu_run_limits &lim)
{
    static bool used = false;
    if (used)
        throw std::logic_error("the SystemC engine runs once per process (SystemC cannot elaborate a second model)");
    used = true;
    if (n == 0)
        return;
    systemc_quiet();
    VcdFile vcd(opts.vcd_path, opts.vcd_temp);
    auto top = std::make_unique<sc::NpuTop>("npu", cores, n, lim, opts, vcd.tf);
    try {
        sc_start_checked();
    } catch (const std::exception &e) {
        throw std::runtime_error(std::string("SystemC run failed: ") + e.what());
    }
    vcd.commit();
    if (opts.info)
        *opts.info = top->run_info();
}

}  // namespace

void sc_start_checked()
{
    try {
        sc_core::sc_start();
    } catch (...) {
        restore_main_stack_for_asan();
        throw;
    }
    restore_main_stack_for_asan();
}

void systemc_quiet()
{
    setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
    sc_core::sc_report_handler::set_handler(&report_to_stderr);
}

ScEngineFn systemc_engine(const ScOptions &opts)
{
    return [opts](npu_timed_core *const *cores, unsigned n, const npu_run_limits &lim) {
        run_systemc(opts, cores, n, lim);
    };
}

}  // namespace npusim
