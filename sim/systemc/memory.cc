// The L2 and DRAM TLM-2.0 targets: translation to the C models only.
#include "npusim/systemc/memory.h"

#include <string>

#include "npusim/systemc/clock.h"

namespace npusim::sc {

uint64_t transaction_cycle(const sc_core::sc_time &delay)
{
    return (sc_core::sc_time_stamp() + delay).value() / ticks_per_cycle();
}

sc_core::sc_time delay_until(uint64_t cycle)
{
    const uint64_t now = now_cycle();
    return cycle > now ? cycle_time(cycle - now) : sc_core::SC_ZERO_TIME;
}

uint64_t transact(tlm::tlm_fw_transport_if<> &fw, tlm::tlm_command cmd, uint64_t now, uint64_t addr, unsigned bytes)
{
    tlm::tlm_generic_payload tx;
    tx.set_command(cmd);
    tx.set_address(addr);
    tx.set_data_ptr(nullptr);
    tx.set_data_length(bytes);
    tx.set_streaming_width(bytes);
    tx.set_byte_enable_ptr(nullptr);
    tx.set_dmi_allowed(false);
    tx.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    // Cores run ahead of SystemC time, never behind it (NpuTop keeps time at
    // the earliest core's clock): a request is never in the past.
    if (now < now_cycle())
        SC_REPORT_ERROR("npusim/memory", "a memory request arrived behind SystemC time");
    sc_core::sc_time delay = delay_until(now);
    fw.b_transport(tx, delay);
    if (tx.is_response_error())
        SC_REPORT_ERROR("npusim/memory", ("transaction failed: " + tx.get_response_string()).c_str());
    return transaction_cycle(delay);
}

MemoryDram::MemoryDram(const sc_core::sc_module_name &name, npu_memsys *ms)
    : sc_core::sc_module(name), socket("socket"), ms_(ms)
{
    socket.register_b_transport(this, &MemoryDram::b_transport);
}

void MemoryDram::b_transport(tlm::tlm_generic_payload &tx, sc_core::sc_time &delay)
{
    const uint64_t now = transaction_cycle(delay);
    const uint64_t done = npu_memsys_dram_access(ms_, now, tx.get_address(), tx.get_data_length(), tx.is_write());
    delay = delay_until(done);
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
}

MemoryL2::MemoryL2(const sc_core::sc_module_name &name, npu_memsys *ms, unsigned cores, bool own_dram)
    : sc_core::sc_module(name), dram_socket("dram_socket"), ms_(ms)
{
    for (unsigned k = 0; k < cores; k++) {
        core_socket.push_back(std::make_unique<tlm_utils::simple_target_socket_tagged<MemoryL2>>(
            ("core_socket" + std::to_string(k)).c_str()));
        core_socket.back()->register_b_transport(this, &MemoryL2::b_transport, int(k));
    }
    // The C L2's misses and writebacks leave through dram_socket. When the
    // memsys's own DRAM is behind it, the L2 asks that DRAM when a fill would
    // arrive (the MSHR rule, docs/timing.md M4); a TLM target cannot be asked
    // without booking the read, so behind one the L2 goes without.
    npu_mem_port port{this, &MemoryL2::next_read, &MemoryL2::next_write,
                      own_dram ? &MemoryL2::next_probe : nullptr};
    npu_l2_set_next_level(npu_memsys_l2(ms_), &port);
}

void MemoryL2::b_transport(int core, tlm::tlm_generic_payload &tx, sc_core::sc_time &delay)
{
    const uint64_t done = npu_memsys_line(ms_, unsigned(core), transaction_cycle(delay), tx.get_address(),
                                          tx.get_data_length(), tx.is_write());
    delay = delay_until(done);
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
}

uint64_t MemoryL2::to_dram(tlm::tlm_command cmd, uint64_t now, uint64_t addr, unsigned bytes)
{
    return transact(*dram_socket.operator->(), cmd, now, addr, bytes);
}

uint64_t MemoryL2::next_read(void *ctx, uint64_t now, uint64_t addr, unsigned bytes)
{
    return static_cast<MemoryL2 *>(ctx)->to_dram(tlm::TLM_READ_COMMAND, now, addr, bytes);
}

uint64_t MemoryL2::next_write(void *ctx, uint64_t now, uint64_t addr, unsigned bytes)
{
    return static_cast<MemoryL2 *>(ctx)->to_dram(tlm::TLM_WRITE_COMMAND, now, addr, bytes);
}

uint64_t MemoryL2::next_probe(void *ctx, uint64_t now, uint64_t addr, unsigned bytes)
{
    return npu_dram_probe_read(npu_memsys_dram(static_cast<MemoryL2 *>(ctx)->ms_), now, addr, bytes);
}

}  // namespace npusim::sc
