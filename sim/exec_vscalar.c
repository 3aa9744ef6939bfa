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
    if (esize_of(dt) == 2)
        for (unsigned i = 0; i < n; i++)
            put_u16(v, i, (uint16_t)bits);
    else
        for (unsigned i = 0; i < n; i++)
            put_u32(v, i, bits);
}

/* NAMEs: the scalar register in field SRC (rs2, or rs3 for the fma family)
 * becomes the vector form's source in that same field. */
#define FORM_S(ID, VV, SRC)                           \
    EXEC(ID)                                          \
    {                                                 \
        npu_insn vv = *in;                            \
        broadcast_scalar(c, in->dt, sreg(c, in->SRC)); \
        vv.SRC = NPU_VREG_OPERAND;                    \
        exec_##VV(c, &vv, info);                      \
    }

/* NAMEi: the literal in imm becomes the vector form's source in field SRC. */
#define FORM_I(ID, VV, SRC)                             \
    EXEC(ID)                                            \
    {                                                   \
        npu_insn vv = *in;                              \
        broadcast_literal(c, in->dt, (uint32_t)in->imm); \
        vv.SRC = NPU_VREG_OPERAND;                      \
        vv.imm = 0;                                     \
        exec_##VV(c, &vv, info);                        \
    }

FORM_S(VADDS, VADD, rs2)
FORM_I(VADDI, VADD, rs2)
FORM_S(VSUBS, VSUB, rs2)
FORM_I(VSUBI, VSUB, rs2)
FORM_S(VMULS, VMUL, rs2)
FORM_I(VMULI, VMUL, rs2)
FORM_S(VMAXS, VMAX, rs2)
FORM_I(VMAXI, VMAX, rs2)
FORM_S(VMINS, VMIN, rs2)
FORM_I(VMINI, VMIN, rs2)
FORM_S(VCEQS, VCEQ, rs2)
FORM_I(VCEQI, VCEQ, rs2)
FORM_S(VCNES, VCNE, rs2)
FORM_I(VCNEI, VCNE, rs2)
FORM_S(VCLTS, VCLT, rs2)
FORM_I(VCLTI, VCLT, rs2)
FORM_S(VCLES, VCLE, rs2)
FORM_I(VCLEI, VCLE, rs2)
FORM_S(VCGTS, VCGT, rs2)
FORM_I(VCGTI, VCGT, rs2)
FORM_S(VCGES, VCGE, rs2)
FORM_I(VCGEI, VCGE, rs2)
FORM_S(VSELS, VSEL, rs2)
FORM_I(VSELI, VSEL, rs2)

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

/* The fma family: the broadcast value is the addend vc (rs3). */
FORM_S(VFMAS, VFMA, rs3)
FORM_I(VFMAI, VFMA, rs3)
FORM_S(VFMSS, VFMS, rs3)
FORM_I(VFMSI, VFMS, rs3)
FORM_S(VFNMAS, VFNMA, rs3)
FORM_I(VFNMAI, VFNMA, rs3)
