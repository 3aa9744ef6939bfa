; The `@split blocks` convention every kernel's manifest declares (the runner
; checks each core's share against it): the tensor is a flat run of 32-byte
; C0 blocks, B of them, and core k of n takes blocks
; [k*ceil(B/n), min((k+1)*ceil(B/n), B)).
;
; SPLIT_BLOCKS done: s25 = this core's first byte, s20 = its bytes,
; s17 = bytes per element; branches to `done` when the core has no blocks
; (more cores than blocks). Clobbers s16, s18, s19.
.macro SPLIT_BLOCKS done
    srd     s16, elems
    srd     s17, esize
    mul     s16, s16, s17           ; tensor bytes
    srli    s16, s16, 5             ; C0 blocks
    srd     s18, ncores
    add     s19, s16, s18
    addi    s19, s19, -1
    divu    s19, s19, s18           ; blocks per core, rounded up
    srd     s25, coreid
    mul     s25, s25, s19           ; first block of this core
    add     s20, s25, s19
    min     s20, s20, s16           ; end block of this core
    bge     s25, s20, \done         ; no work for this core
    sub     s20, s20, s25
    slli    s20, s20, 5             ; bytes for this core
    slli    s25, s25, 5
.endm
