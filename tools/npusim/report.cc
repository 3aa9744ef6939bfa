// Text and JSON reports of one run.
#include "report.h"

#include <cinttypes>
#include <cstdarg>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace npusim {
namespace {

std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char *f, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

std::string shape_text(const npu_layout &l)
{
    return fmt("%" PRIu64 "x%" PRIu64 "x%" PRIu64 "x%" PRIu64, l.n, l.c, l.h, l.w);
}

double json_number(double v)
{
    return std::isfinite(v) ? v : -1.0;  // JSON has no inf: -1 marks "unbounded"
}

}  // namespace

std::string trap_text(const TrapReport &t)
{
    std::string s = fmt("trap: core %u: %s at pc %" PRIu64 " (%s)", t.core, npu_trap_name(t.trap.kind), t.trap.pc,
                        t.disasm.c_str());
    if (!t.srcloc.empty())
        s += " [" + t.srcloc + "]";
    if (t.trap.addr)
        s += fmt(", address 0x%" PRIx64, t.trap.addr);
    s += std::string(": ") + t.trap.message;
    return s;
}

nlohmann::json report_json(const RunResult &r)
{
    using nlohmann::json;
    json j;
    j["kernel"] = r.manifest.name;
    j["dtype"] = r.dtype == NPU_F16 ? "fp16" : "fp32";
    j["shape"] = {r.layout.n, r.layout.c, r.layout.h, r.layout.w};
    j["layout"] = {{"n", r.layout.n}, {"c1", r.layout.c1}, {"h", r.layout.h}, {"w", r.layout.w}, {"c0", r.layout.c0}};
    j["config"] = {{"source", r.config.source},
                   {"core", {{"vlen", r.config.core.vlen_bits}, {"ub_bytes", r.config.core.ub_bytes}}},
                   {"sfu", {{"mode", r.config.core.sfu_mode == NPU_SFU_EXACT ? "exact" : "approx"},
                            {"bits", r.config.core.sfu_bits}}},
                   {"system", {{"cores", r.config.cores}}}};
    json params = json::object();
    for (size_t i = 0; i < r.manifest.params.size(); i++)
        params[r.manifest.params[i].name] = r.params[i];
    j["params"] = params;
    j["timing"] = "functional";
    j["instructions"] = r.instructions;
    j["instructions_per_core"] = r.instructions_per_core;
    j["elements"] = npu_layout_logical_elems(&r.layout);
    j["elements_padded"] = npu_layout_elems(&r.layout);
    j["output_vectors"] = r.output_vectors;
    j["instructions_per_vector"] = r.output_vectors ? double(r.counted_instructions) / double(r.output_vectors) : 0.0;
    json ops = json::object();
    for (unsigned op = 1; op < NPU_NUM_OPS; op++)
        if (r.op_counts[op])
            ops[npu_insn_table[op].mnemonic] = r.op_counts[op];
    j["opcodes"] = ops;
    j["accuracy"] = {{"checked", r.accuracy.checked},
                     {"failures", r.accuracy.failures},
                     {"max_ulp", json_number(r.accuracy.max_ulp)},
                     {"mean_ulp", r.accuracy.checked ? r.accuracy.sum_ulp / double(r.accuracy.checked) : 0.0},
                     {"max_abs_err", json_number(r.accuracy.max_abs_err)},
                     {"bound_ulp", r.bound.max_ulp},
                     {"bound_abs", r.bound.max_abs},
                     {"padding_ok", r.padding_nonzero == 0},
                     {"padding_nonzero", r.padding_nonzero}};
    json traps = json::array();
    for (const TrapReport &t : r.traps)
        traps.push_back({{"core", t.core},
                         {"kind", npu_trap_name(t.trap.kind)},
                         {"pc", t.trap.pc},
                         {"instruction", t.disasm},
                         {"source", t.srcloc},
                         {"address", t.trap.addr},
                         {"message", t.trap.message}});
    j["traps"] = traps;
    j["passed"] = r.passed();
    j["sim"] = {{"host_seconds", r.host_seconds},
                {"sim_instructions_per_second", r.host_seconds > 0 ? double(r.instructions) / r.host_seconds : 0.0}};
    return j;
}

std::string report_text(const RunResult &r)
{
    std::ostringstream os;
    const char *dt = r.dtype == NPU_F16 ? "fp16" : "fp32";
    os << fmt("Kernel:      %s (%s)\n", r.manifest.name.c_str(), r.manifest.path.c_str());
    os << fmt("Tensor:      %s NCHW %s, NC1HWC0 %" PRIu64 "x%" PRIu64 "x%" PRIu64 "x%" PRIu64 "x%" PRIu64 "\n", dt,
              shape_text(r.layout).c_str(), r.layout.n, r.layout.c1, r.layout.h, r.layout.w, r.layout.c0);
    os << fmt("Config:      %s (VLEN %u, UB %zu bytes, SFU %s, %u core%s)\n", r.config.source.c_str(),
              r.config.core.vlen_bits, r.config.core.ub_bytes,
              r.config.core.sfu_mode == NPU_SFU_EXACT ? "exact" : "approx", r.config.cores, r.config.cores > 1 ? "s" : "");
    if (!r.params.empty()) {
        os << "Parameters: ";
        for (size_t i = 0; i < r.params.size(); i++)
            os << fmt(" %s=%g", r.manifest.params[i].name.c_str(), r.params[i]);
        os << "\n";
    }
    os << "\nSummary (functional run: cycle timing is not modelled in this build)\n";
    os << fmt("  Instructions:              %" PRIu64 "\n", r.instructions);
    os << fmt("  Elements:                  %" PRIu64 " (%" PRIu64 " with padding)\n",
              npu_layout_logical_elems(&r.layout), npu_layout_elems(&r.layout));
    os << fmt("  Output vectors:            %" PRIu64 "\n", r.output_vectors);
    os << fmt("  Instructions per vector:   %.2f (arithmetic, compare, select, SFU, logic, convert)\n",
              r.output_vectors ? double(r.counted_instructions) / double(r.output_vectors) : 0.0);
    os << fmt("  Instructions per element:  %.3f (all)\n",
              double(r.instructions) / double(npu_layout_logical_elems(&r.layout)));

    for (const TrapReport &t : r.traps)
        os << "\n" << trap_text(t) << "\n";

    if (r.checked) {
        os << fmt("\nAccuracy (every element against the binary64 reference '%s')\n", r.manifest.reference.c_str());
        os << fmt("  Checked:                   %" PRIu64 "\n", r.accuracy.checked);
        os << fmt("  Max ULP:                   %.3g (bound %g ULP or %g absolute)\n", r.accuracy.max_ulp,
                  r.bound.max_ulp, r.bound.max_abs);
        os << fmt("  Mean ULP:                  %.3g\n",
                  r.accuracy.checked ? r.accuracy.sum_ulp / double(r.accuracy.checked) : 0.0);
        os << fmt("  Max abs error:             %.3g\n", r.accuracy.max_abs_err);
        if (r.accuracy.max_ulp > 0)
            os << fmt("  Worst element:             #%" PRIu64 ": got %.9g, reference %.9g\n", r.accuracy.worst_index,
                      r.accuracy.worst_got, r.accuracy.worst_ref);
        os << fmt("  Failures:                  %" PRIu64 "\n", r.accuracy.failures);
        for (const FailedElement &f : r.failed)
            os << fmt("    element #%" PRIu64 ": x=%.9g got %.9g, reference %.9g (%.3g ULP)\n", f.index, f.inputs[0],
                      f.got, f.ref, f.ulp);
        os << fmt("  Padding:                   %s\n",
                  r.padding_nonzero ? fmt("%" PRIu64 " padded elements are non-zero", r.padding_nonzero).c_str() : "zero");
    }
    os << "\nResult: " << (r.passed() ? "PASS" : "FAIL") << "\n";
    return os.str();
}

}  // namespace npusim
