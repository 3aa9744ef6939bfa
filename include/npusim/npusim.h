/* npusim: the whole public C API in one include. Link with `pkg-config --libs npusim`.
 * npusim/sim.h runs a kernel on a config, as `npusim run` does; the rest are
 * the models it is built from (ISA, assembler, core, timing, L2, DRAM). */
#ifndef NPUSIM_NPUSIM_H
#define NPUSIM_NPUSIM_H

#include "npusim/errors.h"
#include "npusim/isa.h"
#include "npusim/program.h"
#include "npusim/asm.h"
#include "npusim/fp16.h"
#include "npusim/core.h"
#include "npusim/run.h"
#include "npusim/timing.h"
#include "npusim/tensor.h"
#include "npusim/reference.h"
#include "npusim/mem_port.h"
#include "npusim/l2.h"
#include "npusim/dram.h"
#include "npusim/din.h"
#include "npusim/memsys.h"
#include "npusim/sim.h"

#endif
