// The memory system as SystemC/TLM-2.0 modules (memory.model: l2): an L2
// target with one tagged socket per core and an initiator socket to a DRAM
// target. Like Accellera's lt_target, each b_transport only forwards to a C
// model (npu_memsys_line, npu_memsys_dram_access) and annotates the delay: no
// cache or DRAM logic lives here.
//
// Time: a request's cycle travels as SystemC time + the annotated delay
// (loosely timed, temporal decoupling); the target adds the model's latency
// to the delay. A core's DMA engine (the C model in memsys.c) cuts each
// transfer into line requests; NpuTop routes each through the issuing core's
// dma_socket (NpuCoreModule), so every line crosses core -> L2 -> DRAM.
#pragma once

#include <memory>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "npusim/memsys.h"

namespace npusim::sc {

// Cycle of a transaction: SystemC time + its annotated delay.
uint64_t transaction_cycle(const sc_core::sc_time &delay);
// The delay that makes a transaction complete at `cycle` (>= now).
sc_core::sc_time delay_until(uint64_t cycle);

// The DRAM behind the L2: npu_memsys_dram_access (the memsys's DRAM, with
// its observers).
class MemoryDram : public sc_core::sc_module {
public:
    MemoryDram(const sc_core::sc_module_name &name, npu_memsys *ms);
    tlm_utils::simple_target_socket<MemoryDram> socket;

private:
    void b_transport(tlm::tlm_generic_payload &tx, sc_core::sc_time &delay);
    npu_memsys *ms_;
};

// The shared L2: line requests from core k arrive on core_socket[k] and go
// to npu_memsys_line (tags, MSHRs, banks, per-core/per-tensor counters, the
// line trace). Its misses and writebacks leave through dram_socket: the C
// L2's next-level port is this module. own_dram: the memsys's own DRAM
// (MemoryDram) is bound to dram_socket, so the L2 may ask it when a fill
// would arrive before booking it (npu_mem_port.probe_line); with another
// target it cannot, and a fill takes an MSHR as docs/timing.md M4 says for
// a next level without that answer.
class MemoryL2 : public sc_core::sc_module {
public:
    MemoryL2(const sc_core::sc_module_name &name, npu_memsys *ms, unsigned cores, bool own_dram = true);
    std::vector<std::unique_ptr<tlm_utils::simple_target_socket_tagged<MemoryL2>>> core_socket;
    tlm_utils::simple_initiator_socket<MemoryL2> dram_socket;

private:
    void b_transport(int core, tlm::tlm_generic_payload &tx, sc_core::sc_time &delay);
    static uint64_t next_read(void *ctx, uint64_t now, uint64_t addr, unsigned bytes);
    static uint64_t next_write(void *ctx, uint64_t now, uint64_t addr, unsigned bytes);
    static uint64_t next_probe(void *ctx, uint64_t now, uint64_t addr, unsigned bytes);
    uint64_t to_dram(tlm::tlm_command cmd, uint64_t now, uint64_t addr, unsigned bytes);
    npu_memsys *ms_;
};

// One timing-only transaction (the data itself moves in the functional
// model, sim/exec_mem.c, so data_ptr is null) of `bytes` at `addr`, issued at
// cycle `now` (>= SystemC time) through `fw`; returns its completion cycle.
uint64_t transact(tlm::tlm_fw_transport_if<> &fw, tlm::tlm_command cmd, uint64_t now, uint64_t addr, unsigned bytes);

}  // namespace npusim::sc
