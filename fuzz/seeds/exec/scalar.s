; Scalar and vector ops with edge values, as seeds for fuzz_exec.
    li s5, -1
    li s6, 63
    sll s7, s5, s6
    li s8, 0x7fffffffffffffff
    add s9, s8, s5
    mul s10, s8, s8
    divu s11, s8, s0
    srd s12, lanes.f32
    vbcasti.f32 v1, 3.5
    vbcasti.f32 v2, -0.0
    vadd.f32 v3, v1, v2
    vst.f32 v3, [s0]
    vld.f32 v4, [s0]
    li s13, 64
    dmald s0, s1, s13, 1
    dmawait 1
    dmast s0, s2, s13, 2
    dmawait 2
    barrier
    halt
