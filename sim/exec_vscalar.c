/* Semantics of the vector-scalar forms (NAMEs, NAMEi in isa/insns.def): the
 * scalar register or the literal is broadcast to every lane of the operand
 * register, exactly as vbcast / vbcasti write a vector register, and the
 * vector form's own body runs with that register as its last source. One
 * semantics for both forms: `vadds vd, va, sb` gives the bits of
 * `vbcast vt, sb; vadd vd, va, vt`, without occupying a vector register. */
#include "exec.h"

/* vbcast's reading of a scalar: float lanes take its low 32 bits as binary32
 * (rounded once to f16; NaN canonical), integer lanes its low bits. */
static void broadcast_scalar(npu_core *c, unsigned dt, uint64_t s)
{
    uint8_t *v = vreg(c, NPU_VREG_OPERAND);
    const float f = npu_f32_from_bits((uint32_t)s);
    const unsigned n = lanes_of(c, dt);
    for (unsigned i = 0; i < n; i++) {
        switch (dt) {
        case NPU_F16: put_u16(v, i, d2h((double)f)); break;
        case NPU_F32: put_f32(v, i, canon32(f)); break;
        case NPU_I16: put_u16(v, i, (uint16_t)s); break;
        default: put_u32(v, i, (uint32_t)s); break;
        }
    }
}

/* vbcasti's reading of a literal: the assembler rounded it to the lane type. */
static void broadcast_literal(npu_core *c, unsigned dt, uint32_t bits)
{
    uint8_t *v = vreg(c, NPU_VREG_OPERAND);
    const unsigned n = lanes_of(c, dt);
    for (unsigned i = 0; i < n; i++) {
        if (esize_of(dt) == 2)
            put_u16(v, i, (uint16_t)bits);
        else
            put_u32(v, i, bits);
    }
}

/* NAMEs: scalar in rs2, the vector form's second source. */
#define FORM_S(ID, VV)                               \
    EXEC(ID)                                         \
    {                                                \
        npu_insn vv = *in;                           \
        broadcast_scalar(c, in->dt, sreg(c, in->rs2)); \
        vv.rs2 = NPU_VREG_OPERAND;                   \
        exec_##VV(c, &vv, info);                     \
    }

/* NAMEi: literal in imm, the vector form's second source. */
#define FORM_I(ID, VV)                                 \
    EXEC(ID)                                           \
    {                                                  \
        npu_insn vv = *in;                             \
        broadcast_literal(c, in->dt, (uint32_t)in->imm); \
        vv.rs2 = NPU_VREG_OPERAND;                     \
        vv.imm = 0;                                    \
        exec_##VV(c, &vv, info);                       \
    }

FORM_S(VADDS, VADD)
FORM_I(VADDI, VADD)
FORM_S(VSUBS, VSUB)
FORM_I(VSUBI, VSUB)
FORM_S(VMULS, VMUL)
FORM_I(VMULI, VMUL)
FORM_S(VMAXS, VMAX)
FORM_I(VMAXI, VMAX)
FORM_S(VMINS, VMIN)
FORM_I(VMINI, VMIN)
FORM_S(VCEQS, VCEQ)
FORM_I(VCEQI, VCEQ)
FORM_S(VCNES, VCNE)
FORM_I(VCNEI, VCNE)
FORM_S(VCLTS, VCLT)
FORM_I(VCLTI, VCLT)
FORM_S(VCLES, VCLE)
FORM_I(VCLEI, VCLE)
FORM_S(VCGTS, VCGT)
FORM_I(VCGTI, VCGT)
FORM_S(VCGES, VCGE)
FORM_I(VCGEI, VCGE)
FORM_S(VSELS, VSEL)
FORM_I(VSELI, VSEL)

/* vrsub: the broadcast value is the first source of vsub (sb - va). */
EXEC(VRSUBS)
{
    npu_insn vv = *in;
    broadcast_scalar(c, in->dt, sreg(c, in->rs2));
    vv.rs2 = in->rs1;
    vv.rs1 = NPU_VREG_OPERAND;
    exec_VSUB(c, &vv, info);
}

EXEC(VRSUBI)
{
    npu_insn vv = *in;
    broadcast_literal(c, in->dt, (uint32_t)in->imm);
    vv.rs2 = in->rs1;
    vv.rs1 = NPU_VREG_OPERAND;
    vv.imm = 0;
    exec_VSUB(c, &vv, info);
}

/* The fma family: the broadcast value is the addend vc (scalar in rs3). */
#define FORM_FMA_S(ID, VV)                           \
    EXEC(ID)                                         \
    {                                                \
        npu_insn vv = *in;                           \
        broadcast_scalar(c, in->dt, sreg(c, in->rs3)); \
        vv.rs3 = NPU_VREG_OPERAND;                   \
        exec_##VV(c, &vv, info);                     \
    }

#define FORM_FMA_I(ID, VV)                             \
    EXEC(ID)                                           \
    {                                                  \
        npu_insn vv = *in;                             \
        broadcast_literal(c, in->dt, (uint32_t)in->imm); \
        vv.rs3 = NPU_VREG_OPERAND;                     \
        vv.imm = 0;                                    \
        exec_##VV(c, &vv, info);                       \
    }

FORM_FMA_S(VFMAS, VFMA)
FORM_FMA_I(VFMAI, VFMA)
FORM_FMA_S(VFMSS, VFMS)
FORM_FMA_I(VFMSI, VFMS)
FORM_FMA_S(VFNMAS, VFNMA)
FORM_FMA_I(VFNMAI, VFNMA)
