// Streaming trace files, the disassembly cache, and the hook fan-out.
#include "trace.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

#include "atomic_file.h"
#include "error.h"
#include "npusim/program.h"

namespace npusim {

// ---- StreamFile ---------------------------------------------------------------

uint64_t checked_max_bytes(uint64_t max_bytes, uint64_t min_bytes, const char *what)
{
    if (max_bytes < min_bytes)
        throw Error("--trace-max-bytes " + std::to_string(max_bytes) + ": below the " + std::to_string(min_bytes) +
                    " bytes " + what);
    return max_bytes;
}

StreamFile::StreamFile(const std::string &path, uint64_t max_bytes) : path_(path), max_(max_bytes)
{
    // Where write_file_atomic would put the whole file (atomic_file.h): a
    // temporary renamed over the file (a link's target), a device or FIFO
    // written in place, or this process's descriptor (/dev/stdout).
    const OutputPlace place = output_place(path);
    if (place.how == OutputPlace::How::rename) {
        target_ = place.path;
        tmp_ = temp_path(place.path);
    }
    f_ = open_place(place);
    if (!f_)
        throw Error(path + ": cannot write: " + std::strerror(errno));
    std::setvbuf(f_, nullptr, _IOFBF, 1 << 20);
}

StreamFile::~StreamFile()
{
    if (f_) {
        std::fclose(f_);
        if (!tmp_.empty())
            std::remove(tmp_.c_str());
    }
}

bool StreamFile::write(const char *data, size_t n, size_t reserve)
{
    if (failed_ || !f_ || bytes_ + n + reserve > max_)
        return false;
    if (std::fwrite(data, 1, n, f_) != n) {
        failed_ = true;
        return false;
    }
    bytes_ += n;
    return true;
}

void StreamFile::commit()
{
    if (!f_)
        return;
    bool ok = !failed_ && std::fflush(f_) == 0;
    ok = ok && (tmp_.empty() || fsync(fileno(f_)) == 0);  // a device or pipe has nothing to sync
    ok = std::fclose(f_) == 0 && ok;
    f_ = nullptr;
    if (!ok) {
        int e = errno;
        if (!tmp_.empty())
            std::remove(tmp_.c_str());
        throw Error(path_ + ": write failed: " + std::strerror(e));
    }
    if (tmp_.empty())
        return;
    if (std::rename(tmp_.c_str(), target_.c_str()) != 0) {
        int e = errno;
        std::remove(tmp_.c_str());
        throw Error(path_ + ": cannot rename into place: " + std::strerror(e));
    }
    remove_stale_temps(target_);
}

std::string json_escape(const char *s)
{
    std::string out;
    for (; *s; s++) {
        unsigned char ch = static_cast<unsigned char>(*s);
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += char(ch);
        } else if (ch < 0x20) {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", ch);
            out += b;
        } else {
            out += char(ch);
        }
    }
    return out;
}

// ---- DisasmCache --------------------------------------------------------------

DisasmCache::Entry &DisasmCache::at(const npu_issue_event &ev)
{
    if (ev.pc >= by_pc_.size())
        by_pc_.resize(ev.pc + 1);
    Entry &e = by_pc_[ev.pc];
    if (!e.valid) {
        char buf[160];
        npu_disasm(ev.insn, ev.pc, buf, sizeof buf);
        e.text = json_escape(buf);
        e.mnemonic = e.text.substr(0, e.text.find(' '));
        e.valid = true;
    }
    return e;
}

const std::string &DisasmCache::text(const npu_issue_event &ev) { return at(ev).text; }
const std::string &DisasmCache::mnemonic(const npu_issue_event &ev) { return at(ev).mnemonic; }

// ---- TraceSet -------------------------------------------------------------------

void TraceSet::hook(void *ctx, const npu_issue_event *ev)
{
    auto *c = static_cast<std::pair<TraceSet *, unsigned> *>(ctx);
    c->first->issue(c->second, *ev);
}

void TraceSet::attach(unsigned core, npu_timed_core *tc)
{
    if (writers_.empty())
        return;
    ctx_.emplace_back(this, core);
    npu_timed_core_set_hook(tc, &TraceSet::hook, &ctx_.back());
    void *ms = nullptr;
    if (core == 0 && npu_timed_core_dma_backend(tc, &ms) == &npu_memsys_dma)
        npu_memsys_add_observer(static_cast<npu_memsys *>(ms), &TraceSet::observe, this);
}

void TraceSet::observe(void *ctx, const npu_memsys_event *ev)
{
    for (auto &w : static_cast<TraceSet *>(ctx)->writers_)
        w->memory(*ev);
}

void TraceSet::issue(unsigned core, const npu_issue_event &ev)
{
    for (auto &w : writers_)
        w->issue(core, ev);
}

void TraceSet::finish(unsigned core, uint64_t end_cycle)
{
    for (auto &w : writers_)
        w->finish(core, end_cycle);
}

std::vector<std::string> TraceSet::close()
{
    std::vector<std::string> notes;
    for (auto &w : writers_) {
        w->close();
        if (!w->note().empty())
            notes.push_back(w->note());
    }
    return notes;
}

}  // namespace npusim
