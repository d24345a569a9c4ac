	.amdgcn_target "amdgcn-amd-amdhsa-unknown-gfx950"
	.amdhsa_code_object_version 6
	.text
	.globl	k1_kda_pre_R1_L1_nb8_k0_tl
	.p2align	8
	.type	k1_kda_pre_R1_L1_nb8_k0_tl,@function
k1_kda_pre_R1_L1_nb8_k0_tl:
	s_load_dwordx4 s[68:71], s[0:1], 0x80
	s_mov_b32 s7, 0x27000
	s_mov_b32 s6, -1
	s_waitcnt lgkmcnt(0)
	s_and_b32 s5, s69, 0xffff
	s_mov_b32 s4, s68
	buffer_load_dword v1, off, s[4:7], 0
	v_cmp_gt_u32_e64 s[4:5], 23, v0
	s_waitcnt vmcnt(0)
	v_readfirstlane_b32 s8, v1
	s_and_saveexec_b64 s[6:7], s[4:5]
	v_lshlrev_b32_e32 v1, 3, v0
	v_mov_b64_e32 v[2:3], 0
	ds_write_b64 v1, v[2:3]
	s_or_b64 exec, exec, s[6:7]
	v_cmp_eq_u32_e64 s[22:23], 0, v0
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[6:7], s[22:23]
	s_cbranch_execz .LBB0_4
	s_memrealtime s[10:11]
	v_mov_b32_e32 v1, 0
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[2:3], s[10:11]
	ds_write_b64 v1, v[2:3]
.LBB0_4:
	s_or_b64 exec, exec, s[6:7]
	s_ashr_i32 s7, s8, 31
	s_load_dwordx16 s[36:51], s[0:1], 0x0
	s_load_dwordx16 s[52:67], s[0:1], 0x40
	s_load_dword s6, s[0:1], 0x90
	s_lshr_b32 s7, s7, 10
	s_add_i32 s7, s8, s7
	s_and_b32 s7, s7, 0xc00000
	s_sub_i32 s7, s8, s7
	s_lshl_b32 s7, s7, 8
	s_waitcnt lgkmcnt(0)
	s_add_i32 s33, s6, s7
	s_ashr_i32 s3, s2, 31
	s_and_b32 s25, s65, 0xffff
	s_and_b32 s73, s67, 0xffff
	s_add_i32 s33, s33, 1
	v_lshrrev_b32_e32 v2, 6, v0
	s_mov_b32 s75, 0x27000
	s_mov_b32 s74, -1
	v_and_b32_e32 v1, 63, v0
	v_readfirstlane_b32 s28, v2
	s_cmp_gt_i32 s2, 55
	v_lshlrev_b32_e32 v20, 2, v0
	s_cbranch_scc1 .LBB0_35
	v_min_u32_e32 v2, 0x11f, v0
	v_lshrrev_b32_e32 v10, 5, v2
	v_lshlrev_b32_e32 v2, 2, v2
	s_lshl_b32 s6, s2, 7
	v_and_b32_e32 v11, 0x7c, v2
	v_min_u32_e32 v2, 7, v10
	v_or_b32_e32 v4, s6, v11
	v_mul_u32_u24_e32 v2, 0x1c00, v2
	s_and_b32 s9, s37, 0xffff
	s_mov_b32 s8, s36
	s_mov_b32 s10, s74
	s_mov_b32 s11, s75
	s_and_b32 s13, s39, 0xffff
	s_mov_b32 s12, s38
	s_mov_b32 s14, s74
	s_mov_b32 s15, s75
	v_add_lshl_u32 v2, v2, v4, 1
	v_lshlrev_b32_e32 v4, 1, v4
	v_and_b32_e32 v16, 0x7c, v20
	buffer_load_dwordx2 v[2:3], v2, s[12:15], 0 offen
	v_or_b32_e32 v6, s6, v16
	buffer_load_dwordx2 v[4:5], v4, s[8:11], 0 offen
	s_and_b32 s17, s41, 0xffff
	s_mov_b32 s16, s40
	s_mov_b32 s18, s74
	s_mov_b32 s19, s75
	v_lshlrev_b32_e32 v21, 1, v6
	s_and_b32 s37, s43, 0xffff
	s_mov_b32 s36, s42
	s_mov_b32 s38, s74
	s_mov_b32 s39, s75
	buffer_load_dwordx2 v[8:9], v21, s[16:19], 0 offen
	buffer_load_dwordx2 v[6:7], v21, s[36:39], 0 offen
	s_movk_i32 s6, 0x120
	v_cmp_gt_u32_e32 vcc, s6, v0
	v_cmp_eq_u32_e64 s[6:7], 8, v10
	s_waitcnt vmcnt(2)
	s_nop 0
	v_cndmask_b32_e64 v3, v3, v5, s[6:7]
	v_cndmask_b32_e64 v2, v2, v4, s[6:7]
	v_and_b32_e32 v5, 0xffff0000, v3
	v_lshlrev_b32_e32 v4, 16, v3
	v_and_b32_e32 v3, 0xffff0000, v2
	v_lshlrev_b32_e32 v2, 16, v2
	s_and_saveexec_b64 s[6:7], vcc
	v_lshlrev_b32_e32 v11, 2, v11
	v_lshl_or_b32 v11, v10, 9, v11
	ds_write_b128 v11, v[2:5] offset:8384
	s_or_b64 exec, exec, s[6:7]
	s_waitcnt vmcnt(1)
	v_and_b32_e32 v13, 0xffff0000, v9
	v_lshlrev_b32_e32 v12, 16, v9
	v_and_b32_e32 v9, 0xffff0000, v8
	v_lshlrev_b32_e32 v8, 16, v8
	s_waitcnt vmcnt(0)
	v_and_b32_e32 v15, 0xffff0000, v7
	v_lshlrev_b32_e32 v14, 16, v7
	v_and_b32_e32 v7, 0xffff0000, v6
	v_lshlrev_b32_e32 v6, 16, v6
	v_pk_mul_f32 v[22:23], v[2:3], v[2:3]
	v_pk_mul_f32 v[2:3], v[8:9], v[2:3]
	v_pk_mul_f32 v[18:19], v[4:5], v[4:5]
	v_pk_mul_f32 v[4:5], v[12:13], v[4:5]
	v_pk_mul_f32 v[2:3], v[2:3], v[6:7]
	v_pk_mul_f32 v[4:5], v[4:5], v[14:15]
	v_mov_b32_e32 v6, v2
	v_mov_b32_e32 v7, v22
	v_mov_b32_e32 v22, v3
	v_pk_add_f32 v[2:3], v[6:7], v[22:23]
	v_mov_b32_e32 v6, v4
	v_mov_b32_e32 v7, v18
	v_pk_add_f32 v[2:3], v[6:7], v[2:3]
	v_mov_b32_e32 v18, v5
	v_pk_add_f32 v[2:3], v[18:19], v[2:3]
	s_nop 0
	v_mov_b32_e32 v4, v3
	v_mov_b32_e32 v5, v3
	s_nop 1
	v_permlane16_swap_b32_e32 v4, v5
	v_cmp_eq_u32_e64 s[6:7], v4, v3
	v_mov_b32_e32 v7, v2
	s_nop 0
	v_cndmask_b32_e64 v4, v4, v5, s[6:7]
	v_add_f32_e32 v3, v3, v4
	ds_swizzle_b32 v4, v3 offset:swizzle(SWAP,8)
	v_mov_b32_e32 v5, v2
	s_nop 1
	v_permlane16_swap_b32_e32 v5, v7
	v_cmp_eq_u32_e64 s[6:7], v5, v2
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v3, v3, v4
	ds_swizzle_b32 v4, v3 offset:swizzle(SWAP,4)
	v_cndmask_b32_e64 v7, v5, v7, s[6:7]
	v_mov_b32_e32 v5, v2
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v4, v3, v4
	ds_swizzle_b32 v6, v4 offset:swizzle(SWAP,2)
	s_waitcnt lgkmcnt(0)
	v_pk_add_f32 v[2:3], v[4:5], v[6:7]
	ds_swizzle_b32 v4, v3 offset:swizzle(SWAP,8)
	ds_swizzle_b32 v5, v2 offset:swizzle(SWAP,1)
	s_waitcnt lgkmcnt(1)
	v_add_f32_e32 v3, v3, v4
	ds_swizzle_b32 v4, v3 offset:swizzle(SWAP,4)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v3, v3, v4
	ds_swizzle_b32 v4, v3 offset:swizzle(SWAP,2)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v6, v3, v4
	ds_swizzle_b32 v4, v6 offset:swizzle(SWAP,1)
	v_and_b32_e32 v3, 31, v0
	v_cmp_eq_u32_e64 s[6:7], 0, v3
	s_and_b64 s[8:9], vcc, s[6:7]
	s_and_saveexec_b64 s[6:7], s[8:9]
	s_cbranch_execz .LBB0_9
	v_mov_b32_e32 v7, v2
	s_waitcnt lgkmcnt(0)
	v_pk_add_f32 v[4:5], v[6:7], v[4:5]
	s_mul_i32 s8, s2, 0x90
	v_mov_b32_e32 v3, s33
	v_mov_b32_e32 v2, v5
	v_lshl_add_u32 v6, v10, 4, s8
	s_mov_b32 s72, s66
	v_mov_b32_e32 v5, s33
	buffer_store_dwordx4 v[2:5], v6, s[72:75], 0 offen sc1
.LBB0_9:
	s_or_b64 exec, exec, s[6:7]
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[6:7], s[22:23]
	s_cbranch_execz .LBB0_11
	s_memrealtime s[8:9]
	v_mov_b32_e32 v2, 0
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[4:5], s[8:9]
	ds_write_b64 v2, v[4:5] offset:8
.LBB0_11:
	s_or_b64 exec, exec, s[6:7]
	s_cmp_gt_i32 s2, 0
	s_cbranch_scc0 .LBB0_115
	s_and_saveexec_b64 s[6:7], s[22:23]
	s_cbranch_execz .LBB0_14
.LBB0_13:
	s_memrealtime s[8:9]
	v_mov_b32_e32 v2, 0
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[4:5], s[8:9]
	ds_write_b64 v2, v[4:5] offset:16
.LBB0_14:
	s_or_b64 exec, exec, s[6:7]
	v_cmp_gt_u32_e32 vcc, 10, v0
	s_and_saveexec_b64 s[6:7], vcc
	s_cbranch_execz .LBB0_20
	v_lshlrev_b32_e32 v4, 3, v0
	v_or_b32_e32 v2, 0x1000, v4
	s_mov_b32 s72, s66
	;;#ASMSTART
	; kda-sim: poll mix WGT
	;;#ASMEND
	buffer_load_dwordx2 v[2:3], v2, s[72:75], 0 offen offset:3968 sc1
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e32 vcc, s33, v3
	s_and_saveexec_b64 s[8:9], vcc
	s_cbranch_execz .LBB0_19
	v_or_b32_e32 v4, 0x1f80, v4
	s_mov_b64 s[10:11], 0
	s_mov_b32 s72, s66
.LBB0_17:
	s_sleep 1
	buffer_load_dwordx2 v[2:3], v4, s[72:75], 0 offen sc1
	s_waitcnt vmcnt(0)
	v_cmp_eq_u32_e32 vcc, s33, v3
	s_or_b64 s[10:11], vcc, s[10:11]
	s_andn2_b64 exec, exec, s[10:11]
	s_cbranch_execnz .LBB0_17
	s_or_b64 exec, exec, s[10:11]
.LBB0_19:
	s_or_b64 exec, exec, s[8:9]
	ds_write_b32 v20, v2 offset:192
.LBB0_20:
	s_or_b64 exec, exec, s[6:7]
	v_lshlrev_b32_e32 v38, 2, v16
	s_waitcnt lgkmcnt(0)
	s_barrier
	ds_read_b128 v[2:5], v38 offset:8384
	ds_read_b128 v[6:9], v38 offset:8896
	v_mov_b32_e32 v19, 0
	ds_read_b128 v[10:13], v19 offset:192
	ds_read_b128 v[14:17], v38 offset:9408
	ds_read_b128 v[22:25], v19 offset:208
	ds_read_b64 v[34:35], v19 offset:224
	ds_read_b128 v[26:29], v38 offset:9920
	ds_read_b128 v[30:33], v38 offset:12480
	s_waitcnt lgkmcnt(4)
	v_mul_f32_e32 v39, v12, v15
	v_mov_b32_e32 v15, v16
	v_mov_b32_e32 v16, v9
	v_mov_b32_e32 v36, v11
	v_mov_b32_e32 v37, v12
	v_pk_mul_f32 v[16:17], v[36:37], v[16:17]
	v_mov_b32_e32 v37, 1.0
	v_mov_b32_e32 v36, v5
	v_mov_b32_e32 v18, v10
	v_pk_mul_f32 v[18:19], v[18:19], v[36:37]
	v_mov_b32_e32 v36, v3
	v_mov_b32_e32 v37, v7
	v_pk_mul_f32 v[36:37], v[10:11], v[36:37]
	v_mov_b32_e32 v7, v8
	v_add_f32_e32 v3, 0, v36
	v_add_f32_e32 v9, v3, v37
	v_mov_b32_e32 v3, v4
	v_pk_mul_f32 v[2:3], v[10:11], v[2:3] op_sel_hi:[0,1]
	v_pk_add_f32 v[2:3], v[2:3], 0 op_sel_hi:[1,0]
	v_pk_mul_f32 v[4:5], v[10:11], v[6:7] op_sel:[1,0]
	v_pk_mul_f32 v[14:15], v[12:13], v[14:15] op_sel_hi:[0,1]
	v_pk_add_f32 v[2:3], v[2:3], v[4:5]
	v_add_f32_e32 v4, v18, v19
	v_add_f32_e32 v4, v4, v16
	v_add_f32_e32 v7, v4, v17
	v_mov_b32_e32 v8, v13
	s_waitcnt lgkmcnt(1)
	v_mov_b32_e32 v4, v27
	v_mov_b32_e32 v5, v29
	v_pk_mul_f32 v[10:11], v[8:9], v[4:5] op_sel_hi:[0,1]
	v_pk_add_f32 v[12:13], v[2:3], v[14:15]
	v_mov_b32_e32 v27, v28
	ds_read_b128 v[2:5], v38 offset:10432
	v_add_f32_e32 v6, v9, v39
	v_pk_mul_f32 v[8:9], v[8:9], v[26:27] op_sel_hi:[0,1]
	v_pk_add_f32 v[12:13], v[12:13], v[8:9]
	v_pk_add_f32 v[10:11], v[6:7], v[10:11]
	ds_read_b128 v[6:9], v38 offset:10944
	s_waitcnt lgkmcnt(1)
	v_mov_b32_e32 v15, v4
	v_mov_b32_e32 v4, v3
	v_mov_b32_e32 v14, v2
	v_pk_mul_f32 v[2:3], v[22:23], v[4:5] op_sel_hi:[0,1]
	v_pk_mul_f32 v[14:15], v[22:23], v[14:15] op_sel_hi:[0,1]
	v_pk_add_f32 v[10:11], v[10:11], v[2:3]
	s_waitcnt lgkmcnt(0)
	v_mov_b32_e32 v2, v6
	v_mov_b32_e32 v3, v8
	v_pk_add_f32 v[12:13], v[12:13], v[14:15]
	v_pk_mul_f32 v[2:3], v[22:23], v[2:3] op_sel:[1,0]
	v_mov_b32_e32 v8, v7
	v_pk_add_f32 v[12:13], v[12:13], v[2:3]
	ds_read_b128 v[2:5], v38 offset:11456
	v_pk_mul_f32 v[6:7], v[22:23], v[8:9] op_sel:[1,0]
	s_nop 0
	v_pk_add_f32 v[10:11], v[10:11], v[6:7]
	ds_read_b128 v[6:9], v38 offset:11968
	s_waitcnt lgkmcnt(1)
	v_mov_b32_e32 v15, v4
	v_mov_b32_e32 v4, v3
	v_mov_b32_e32 v14, v2
	v_pk_mul_f32 v[2:3], v[24:25], v[4:5] op_sel_hi:[0,1]
	v_pk_add_f32 v[2:3], v[10:11], v[2:3]
	v_mov_b32_e32 v4, v25
	s_waitcnt lgkmcnt(0)
	v_mov_b32_e32 v10, v6
	v_mov_b32_e32 v11, v8
	v_mov_b32_e32 v8, v7
	v_pk_mul_f32 v[14:15], v[24:25], v[14:15] op_sel_hi:[0,1]
	v_pk_mul_f32 v[10:11], v[4:5], v[10:11] op_sel_hi:[0,1]
	v_pk_mul_f32 v[4:5], v[4:5], v[8:9] op_sel_hi:[0,1]
	v_pk_add_f32 v[12:13], v[12:13], v[14:15]
	v_pk_add_f32 v[2:3], v[2:3], v[4:5]
	v_mov_b32_e32 v4, v30
	v_mov_b32_e32 v5, v32
	v_pk_add_f32 v[10:11], v[12:13], v[10:11]
	v_pk_mul_f32 v[4:5], v[34:35], v[4:5] op_sel_hi:[0,1]
	v_pk_add_f32 v[4:5], v[10:11], v[4:5]
	v_mov_b32_e32 v32, v31
	v_div_scale_f32 v8, s[6:7], v35, v35, v5
	v_rcp_f32_e32 v9, v8
	v_pk_mul_f32 v[6:7], v[34:35], v[32:33] op_sel_hi:[0,1]
	v_pk_add_f32 v[6:7], v[2:3], v[6:7]
	v_fma_f32 v2, -v8, v9, 1.0
	v_fmac_f32_e32 v9, v2, v9
	v_div_scale_f32 v2, vcc, v5, v35, v5
	v_mul_f32_e32 v3, v2, v9
	v_fma_f32 v10, -v8, v3, v2
	v_fmac_f32_e32 v3, v10, v9
	v_fma_f32 v2, -v8, v3, v2
	v_div_scale_f32 v8, s[6:7], v35, v35, v4
	v_rcp_f32_e32 v10, v8
	v_div_fmas_f32 v2, v2, v9, v3
	v_div_fixup_f32 v3, v2, v35, v5
	v_fma_f32 v2, -v8, v10, 1.0
	v_fmac_f32_e32 v10, v2, v10
	v_div_scale_f32 v2, vcc, v4, v35, v4
	v_mul_f32_e32 v5, v2, v10
	v_fma_f32 v9, -v8, v5, v2
	v_fmac_f32_e32 v5, v9, v10
	v_fma_f32 v2, -v8, v5, v2
	v_div_scale_f32 v8, s[6:7], v35, v35, v7
	v_rcp_f32_e32 v9, v8
	v_div_fmas_f32 v2, v2, v10, v5
	v_div_fixup_f32 v2, v2, v35, v4
	v_fma_f32 v4, -v8, v9, 1.0
	v_fmac_f32_e32 v9, v4, v9
	v_div_scale_f32 v4, vcc, v7, v35, v7
	v_mul_f32_e32 v5, v4, v9
	v_fma_f32 v10, -v8, v5, v4
	v_fmac_f32_e32 v5, v10, v9
	v_fma_f32 v4, -v8, v5, v4
	v_div_scale_f32 v8, s[6:7], v35, v35, v6
	v_rcp_f32_e32 v10, v8
	v_div_fmas_f32 v4, v4, v9, v5
	v_div_fixup_f32 v5, v4, v35, v7
	v_fma_f32 v4, -v8, v10, 1.0
	v_fmac_f32_e32 v10, v4, v10
	v_div_scale_f32 v4, vcc, v6, v35, v6
	v_mul_f32_e32 v7, v4, v10
	v_fma_f32 v9, -v8, v7, v4
	v_fmac_f32_e32 v7, v9, v10
	v_fma_f32 v4, -v8, v7, v4
	v_div_fmas_f32 v4, v4, v10, v7
	v_div_fixup_f32 v4, v4, v35, v6
	v_mov_b32_e32 v8, v2
	v_mov_b32_e32 v9, v4
	v_mov_b32_e32 v6, v3
	v_mov_b32_e32 v7, v5
	v_pk_mul_f32 v[8:9], v[8:9], v[8:9]
	v_pk_mul_f32 v[6:7], v[6:7], v[6:7]
	v_add_f32_e32 v8, v8, v9
	v_add_f32_e32 v6, v6, v8
	v_add_f32_e32 v6, v7, v6
	v_mov_b32_e32 v7, v6
	v_mov_b32_e32 v8, v6
	s_nop 1
	v_permlane16_swap_b32_e32 v7, v8
	v_cmp_eq_u32_e32 vcc, v7, v6
	s_nop 1
	v_cndmask_b32_e32 v7, v7, v8, vcc
	v_add_f32_e32 v6, v6, v7
	ds_swizzle_b32 v7, v6 offset:swizzle(SWAP,8)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v6, v6, v7
	ds_swizzle_b32 v7, v6 offset:swizzle(SWAP,4)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v6, v6, v7
	ds_swizzle_b32 v7, v6 offset:swizzle(SWAP,2)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v6, v6, v7
	ds_swizzle_b32 v7, v6 offset:swizzle(SWAP,1)
	s_and_saveexec_b64 s[6:7], s[22:23]
	s_cbranch_execz .LBB0_22
	s_lshl3_add_u32 s8, s2, 0x1000
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v6, v6, v7
	v_mov_b32_e32 v7, s33
	s_mov_b32 s72, s66
	v_mov_b32_e32 v8, s8
	buffer_store_dwordx2 v[6:7], v8, s[72:75], 0 offen offset:4048 sc1
.LBB0_22:
	s_or_b64 exec, exec, s[6:7]
	v_cmp_gt_u32_e32 vcc, 8, v0
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[18:19], vcc
	s_cbranch_execz .LBB0_28
	v_min_i32_e32 v22, 7, v0
	v_mov_b32_e32 v7, 0x1fd0
	v_mad_u32_u24 v23, v22, 56, v7
	v_mov_b32_e32 v7, 0x1fd8
	v_mad_u32_u24 v24, v22, 56, v7
	v_mov_b32_e32 v7, 0x1fe0
	v_mad_u32_u24 v25, v22, 56, v7
	v_mov_b32_e32 v7, 0x1fe8
	v_mad_u32_u24 v26, v22, 56, v7
	v_mov_b32_e32 v7, 0x1ff0
	v_mul_u32_u24_e32 v6, 56, v22
	v_mad_u32_u24 v27, v22, 56, v7
	v_mov_b32_e32 v7, 0x1ff8
	v_mad_u32_u24 v28, v22, 56, v7
	v_or_b32_e32 v29, 0x2000, v6
	s_mov_b64 s[20:21], 0
	s_mov_b32 s72, s66
	;;#ASMSTART
	; kda-sim: poll mix MSQ
	;;#ASMEND
	s_branch .LBB0_25
	.p2align	5
.LBB0_24:
	s_or_b64 exec, exec, s[6:7]
	s_and_b64 s[6:7], exec, s[26:27]
	s_or_b64 s[20:21], s[6:7], s[20:21]
	s_andn2_b64 exec, exec, s[20:21]
	s_cbranch_execz .LBB0_27
.LBB0_25:
	buffer_load_dwordx2 v[6:7], v23, s[72:75], 0 offen sc1
	buffer_load_dwordx2 v[8:9], v24, s[72:75], 0 offen sc1
	buffer_load_dwordx2 v[10:11], v25, s[72:75], 0 offen sc1
	buffer_load_dwordx2 v[12:13], v26, s[72:75], 0 offen sc1
	buffer_load_dwordx2 v[14:15], v27, s[72:75], 0 offen sc1
	buffer_load_dwordx2 v[16:17], v28, s[72:75], 0 offen sc1
	buffer_load_dwordx2 v[18:19], v29, s[72:75], 0 offen sc1
	s_or_b64 s[26:27], s[26:27], exec
	s_waitcnt vmcnt(6)
	v_cmp_ne_u32_e32 vcc, s33, v7
	s_waitcnt vmcnt(5)
	v_cmp_ne_u32_e64 s[6:7], s33, v9
	s_waitcnt vmcnt(4)
	v_cmp_ne_u32_e64 s[8:9], s33, v11
	s_or_b64 s[6:7], vcc, s[6:7]
	s_waitcnt vmcnt(3)
	v_cmp_ne_u32_e64 s[10:11], s33, v13
	s_or_b64 s[6:7], s[6:7], s[8:9]
	s_waitcnt vmcnt(2)
	v_cmp_ne_u32_e64 s[12:13], s33, v15
	s_or_b64 s[6:7], s[6:7], s[10:11]
	s_waitcnt vmcnt(1)
	v_cmp_ne_u32_e64 s[14:15], s33, v17
	s_or_b64 s[6:7], s[6:7], s[12:13]
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e64 s[16:17], s33, v19
	s_or_b64 s[6:7], s[6:7], s[14:15]
	s_or_b64 s[8:9], s[6:7], s[16:17]
	s_and_saveexec_b64 s[6:7], s[8:9]
	s_cbranch_execz .LBB0_24
	s_andn2_b64 s[26:27], s[26:27], exec
	s_sleep 1
	s_branch .LBB0_24
.LBB0_27:
	s_or_b64 exec, exec, s[20:21]
	v_add_f32_e32 v6, 0, v6
	v_add_f32_e32 v6, v6, v8
	v_add_f32_e32 v6, v6, v10
	v_add_f32_e32 v6, v6, v12
	v_add_f32_e32 v6, v6, v14
	v_add_f32_e32 v6, v6, v16
	v_add_f32_e32 v6, v6, v18
	v_lshlrev_b32_e32 v7, 2, v22
	ds_write_b32 v7, v6 offset:704
.LBB0_28:
	s_or_b64 exec, exec, s[18:19]
	v_cmp_gt_u32_e32 vcc, 32, v0
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[6:7], vcc
	s_cbranch_execz .LBB0_30
	s_and_b32 s9, s45, 0xffff
	s_mov_b32 s11, 0x27000
	s_mov_b32 s10, -1
	s_mov_b32 s8, s44
	buffer_load_dwordx2 v[14:15], v21, s[8:11], 0 offen
	v_mov_b32_e32 v10, 0
	ds_read_b128 v[6:9], v10 offset:704
	ds_read_b128 v[10:13], v10 offset:720
	s_mov_b32 s24, s64
	s_mov_b32 s26, s74
	s_mov_b32 s27, s75
	s_waitcnt lgkmcnt(1)
	v_add_f32_e32 v6, v6, v7
	v_add_f32_e32 v6, v6, v8
	v_add_f32_e32 v6, v6, v9
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v6, v6, v10
	v_add_f32_e32 v6, v6, v11
	v_add_f32_e32 v6, v6, v12
	v_add_f32_e32 v6, v6, v13
	v_mul_f32_e32 v6, 0x39124925, v6
	v_add_f32_e32 v6, 0x3727c5ac, v6
	v_rsq_f32_e32 v6, v6
	s_waitcnt vmcnt(0)
	v_lshlrev_b32_e32 v9, 16, v15
	v_pk_mul_f32 v[4:5], v[4:5], v[6:7] op_sel_hi:[1,0]
	v_pk_mul_f32 v[2:3], v[2:3], v[6:7] op_sel_hi:[1,0]
	v_and_b32_e32 v7, 0xffff0000, v15
	v_and_b32_e32 v6, 0xffff0000, v14
	v_lshlrev_b32_e32 v8, 16, v14
	v_pk_mul_f32 v[4:5], v[4:5], v[6:7]
	v_pk_mul_f32 v[2:3], v[2:3], v[8:9]
	v_cvt_pk_bf16_f32 v4, v4, v5
	v_cvt_pk_bf16_f32 v2, v2, v3
	v_and_b32_e32 v3, 0xffff0000, v4
	v_lshlrev_b32_e32 v4, 16, v4
	v_or_b32_sdwa v3, v3, v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:WORD_1
	v_or_b32_sdwa v2, v4, v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:WORD_0
	buffer_store_dwordx2 v[2:3], v21, s[24:27], 0 offen sc1
.LBB0_30:
	s_or_b64 exec, exec, s[6:7]
	s_waitcnt vmcnt(0)
	s_barrier
	;;#ASMSTART
	; kda-sim: publish mix XRDY
	;;#ASMEND
	s_and_saveexec_b64 s[6:7], s[22:23]
	s_cbranch_execz .LBB0_32
	s_lshl3_add_u32 s8, s2, 0x2000
	v_mov_b32_e32 v2, 1
	v_mov_b32_e32 v3, s33
	s_mov_b32 s72, s66
	v_mov_b32_e32 v4, s8
	buffer_store_dwordx2 v[2:3], v4, s[72:75], 0 offen offset:400 sc1
.LBB0_32:
	s_or_b64 exec, exec, s[6:7]
	s_barrier
	s_and_saveexec_b64 s[6:7], s[22:23]
	s_cbranch_execz .LBB0_34
	s_memrealtime s[8:9]
	v_mov_b32_e32 v2, 0
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[4:5], s[8:9]
	ds_write_b64 v2, v[4:5] offset:24
.LBB0_34:
	s_or_b64 exec, exec, s[6:7]
.LBB0_35:
	s_sub_i32 s14, s2, 56
	s_cmpk_gt_u32 s14, 0xc4
	v_and_b32_e32 v27, 15, v0
	s_cbranch_scc1 .LBB0_53
	v_lshrrev_b32_e32 v3, 1, v0
	v_lshl_or_b32 v2, s14, 5, v27
	v_and_b32_e32 v3, 24, v3
	s_movk_i32 s6, 0x1c00
	v_lshl_or_b32 v7, s28, 7, v3
	v_mul_lo_u32 v5, v2, s6
	v_or_b32_e32 v2, v5, v7
	s_mov_b32 s11, 0x27000
	s_mov_b32 s10, -1
	s_and_b32 s9, s47, 0xffff
	s_mov_b32 s8, s46
	v_lshlrev_b32_e32 v2, 1, v2
	v_or_b32_e32 v8, 0x400, v7
	buffer_load_dwordx4 v[120:123], v2, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[124:127], v2, s[8:11], 0 offen offset:64 nt
	buffer_load_dwordx4 v[12:15], v2, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[116:119], v2, s[8:11], 0 offen offset:192 nt
	v_add_lshl_u32 v2, v5, v8, 1
	v_or_b32_e32 v9, 0x800, v7
	buffer_load_dwordx4 v[112:115], v2, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[96:99], v2, s[8:11], 0 offen offset:64 nt
	buffer_load_dwordx4 v[100:103], v2, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[88:91], v2, s[8:11], 0 offen offset:192 nt
	v_add_lshl_u32 v2, v5, v9, 1
	v_or_b32_e32 v10, 0xc00, v7
	buffer_load_dwordx4 v[104:107], v2, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[108:111], v2, s[8:11], 0 offen offset:64 nt
	buffer_load_dwordx4 v[92:95], v2, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[16:19], v2, s[8:11], 0 offen offset:192 nt
	v_add_lshl_u32 v2, v5, v10, 1
	v_or_b32_e32 v4, 0x1000, v7
	buffer_load_dwordx4 v[84:87], v2, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[80:83], v2, s[8:11], 0 offen offset:64 nt
	buffer_load_dwordx4 v[76:79], v2, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[68:71], v2, s[8:11], 0 offen offset:192 nt
	v_add_lshl_u32 v2, v5, v4, 1
	v_or_b32_e32 v3, 0x1400, v7
	buffer_load_dwordx4 v[72:75], v2, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[64:67], v2, s[8:11], 0 offen offset:64 nt
	buffer_load_dwordx4 v[60:63], v2, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[52:55], v2, s[8:11], 0 offen offset:192 nt
	v_add_lshl_u32 v2, v5, v3, 1
	buffer_load_dwordx4 v[56:59], v2, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[48:51], v2, s[8:11], 0 offen offset:64 nt
	buffer_load_dwordx4 v[44:47], v2, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[40:43], v2, s[8:11], 0 offen offset:192 nt
	v_or_b32_e32 v2, 0x1800, v7
	v_add_lshl_u32 v5, v5, v2, 1
	buffer_load_dwordx4 v[36:39], v5, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[32:35], v5, s[8:11], 0 offen offset:64 nt
	buffer_load_dwordx4 v[28:31], v5, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[22:25], v5, s[8:11], 0 offen offset:192 nt
	v_cmp_gt_u32_e32 vcc, 56, v0
	s_and_saveexec_b64 s[6:7], vcc
	s_cbranch_execz .LBB0_40
	v_lshlrev_b32_e32 v5, 3, v0
	v_or_b32_e32 v6, 0x2000, v5
	s_mov_b32 s72, s66
	;;#ASMSTART
	; kda-sim: poll load_x XRDY
	;;#ASMEND
	buffer_load_dword v6, v6, s[72:75], 0 offen offset:404 sc1
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e32 vcc, s33, v6
	s_and_b64 exec, exec, vcc
	s_cbranch_execz .LBB0_40
	v_add_u32_e32 v5, 0x2194, v5
	s_mov_b64 s[12:13], 0
	s_mov_b32 s72, s66
.LBB0_39:
	s_sleep 1
	buffer_load_dword v6, v5, s[72:75], 0 offen sc1
	s_waitcnt vmcnt(0)
	v_cmp_eq_u32_e32 vcc, s33, v6
	s_or_b64 s[12:13], vcc, s[12:13]
	s_andn2_b64 exec, exec, s[12:13]
	s_cbranch_execnz .LBB0_39
.LBB0_40:
	s_or_b64 exec, exec, s[6:7]
	v_lshlrev_b32_e32 v5, 4, v0
	s_mov_b32 s24, s64
	s_mov_b32 s26, s74
	s_mov_b32 s27, s75
	s_waitcnt lgkmcnt(0)
	s_barrier
	buffer_load_dwordx4 v[128:131], v5, s[24:27], 0 offen sc1
	v_or_b32_e32 v6, 0x200, v0
	s_movk_i32 s6, 0x380
	v_cmp_gt_u32_e32 vcc, s6, v6
	s_waitcnt vmcnt(0)
	ds_write_b128 v5, v[128:131] offset:8384
	s_and_saveexec_b64 s[6:7], vcc
	s_cbranch_execz .LBB0_42
	v_lshlrev_b32_e32 v6, 4, v6
	buffer_load_dwordx4 v[128:131], v6, s[24:27], 0 offen sc1
	s_waitcnt vmcnt(0)
	ds_write_b128 v5, v[128:131] offset:16576
.LBB0_42:
	s_or_b64 exec, exec, s[6:7]
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[6:7], s[22:23]
	s_cbranch_execz .LBB0_44
	s_memrealtime s[12:13]
	v_mov_b32_e32 v6, 0
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[128:129], s[12:13]
	ds_write_b64 v6, v[128:129] offset:32
.LBB0_44:
	s_or_b64 exec, exec, s[6:7]
	v_lshlrev_b32_e32 v6, 1, v7
	ds_read_b128 v[128:131], v6 offset:8384
	ds_read_b128 v[132:135], v6 offset:8448
	v_lshlrev_b32_e32 v11, 1, v2
	s_lshl_b32 s12, s14, 1
	s_or_b32 s12, s12, 1
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[120:123], v[120:123], v[128:131], 0
	s_min_u32 s6, s12, 0x188
	s_mov_b32 s8, s46
	v_cmp_gt_u32_e32 vcc, 16, v0
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[120:123], v[124:127], v[132:135], v[120:123]
	ds_read_b128 v[124:127], v6 offset:8512
	ds_read_b128 v[128:131], v6 offset:8576
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[120:123], v[12:15], v[124:127], v[120:123]
	v_lshlrev_b32_e32 v13, 1, v8
	v_lshlrev_b32_e32 v14, 1, v9
	ds_read_b128 v[124:127], v14 offset:8384
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[116:119], v[116:119], v[128:131], v[120:123]
	v_lshlrev_b32_e32 v15, 1, v10
	v_lshlrev_b32_e32 v12, 1, v3
	s_nop 0
	ds_read_b128 v[120:123], v13 offset:8384
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[112:115], v[112:115], v[120:123], v[116:119]
	s_nop 2
	ds_read_b128 v[116:119], v6 offset:10496
	ds_read_b128 v[120:123], v6 offset:10560
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[96:99], v[96:99], v[116:119], v[112:115]
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[96:99], v[100:103], v[120:123], v[96:99]
	ds_read_b128 v[100:103], v6 offset:10624
	ds_read_b128 v[112:115], v6 offset:12544
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[88:91], v[88:91], v[100:103], v[96:99]
	s_nop 3
	ds_read_b128 v[96:99], v6 offset:12608
	ds_read_b128 v[100:103], v6 offset:12672
	v_mfma_f32_16x16x32_bf16 v[88:91], v[104:107], v[124:127], v[88:91]
	s_waitcnt lgkmcnt(2)
	v_mfma_f32_16x16x32_bf16 v[88:91], v[108:111], v[112:115], v[88:91]
	ds_read_b128 v[108:111], v6 offset:20800
	s_waitcnt lgkmcnt(2)
	v_mfma_f32_16x16x32_bf16 v[88:91], v[92:95], v[96:99], v[88:91]
	ds_read_b128 v[92:95], v15 offset:8384
	s_waitcnt lgkmcnt(2)
	v_mfma_f32_16x16x32_bf16 v[88:91], v[16:19], v[100:103], v[88:91]
	v_lshlrev_b32_e32 v16, 1, v4
	ds_read_b128 v[96:99], v16 offset:8384
	v_lshl_or_b32 v17, s6, 4, v27
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[84:87], v[84:87], v[92:95], v[88:91]
	s_nop 2
	ds_read_b128 v[88:91], v6 offset:14592
	ds_read_b128 v[92:95], v6 offset:14656
	v_mul_u32_u24_e32 v17, 0x1c00, v17
	v_or_b32_e32 v7, v17, v7
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[80:83], v[80:83], v[88:91], v[84:87]
	v_add_lshl_u32 v8, v17, v8, 1
	v_add_lshl_u32 v9, v17, v9, 1
	v_add_lshl_u32 v10, v17, v10, 1
	ds_read_b128 v[84:87], v6 offset:14720
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[76:79], v[76:79], v[92:95], v[80:83]
	v_lshlrev_b32_e32 v7, 1, v7
	s_movk_i32 s6, 0x300
	s_nop 0
	ds_read_b128 v[80:83], v6 offset:16640
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[68:71], v[68:71], v[84:87], v[76:79]
	s_nop 2
	ds_read_b128 v[76:79], v6 offset:16704
	ds_read_b128 v[84:87], v6 offset:16768
	v_mfma_f32_16x16x32_bf16 v[68:71], v[72:75], v[96:99], v[68:71]
	ds_read_b128 v[72:75], v6 offset:18688
	ds_read_b128 v[88:91], v6 offset:18752
	ds_read_b128 v[92:95], v12 offset:8384
	ds_read_b128 v[100:103], v11 offset:8384
	ds_read_b128 v[96:99], v6 offset:18816
	ds_read_b128 v[104:107], v6 offset:20736
	s_waitcnt lgkmcnt(8)
	v_mfma_f32_16x16x32_bf16 v[64:67], v[64:67], v[80:83], v[68:71]
	s_waitcnt lgkmcnt(7)
	v_mfma_f32_16x16x32_bf16 v[60:63], v[60:63], v[76:79], v[64:67]
	s_waitcnt lgkmcnt(6)
	v_mfma_f32_16x16x32_bf16 v[52:55], v[52:55], v[84:87], v[60:63]
	buffer_load_dwordx4 v[84:87], v8, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[76:79], v8, s[8:11], 0 offen offset:64 nt
	s_waitcnt lgkmcnt(3)
	v_mfma_f32_16x16x32_bf16 v[52:55], v[56:59], v[92:95], v[52:55]
	v_mfma_f32_16x16x32_bf16 v[48:51], v[48:51], v[72:75], v[52:55]
	buffer_load_dwordx4 v[80:83], v8, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[64:67], v8, s[8:11], 0 offen offset:192 nt
	buffer_load_dwordx4 v[68:71], v9, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[72:75], v9, s[8:11], 0 offen offset:64 nt
	v_lshlrev_b32_e32 v8, 6, v0
	v_mfma_f32_16x16x32_bf16 v[48:51], v[44:47], v[88:91], v[48:51]
	buffer_load_dwordx4 v[56:59], v9, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[60:63], v9, s[8:11], 0 offen offset:192 nt
	buffer_load_dwordx4 v[52:55], v10, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[44:47], v10, s[8:11], 0 offen offset:64 nt
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[88:91], v[40:43], v[96:99], v[48:51]
	s_nop 2
	buffer_load_dwordx4 v[48:51], v10, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[40:43], v10, s[8:11], 0 offen offset:192 nt
	buffer_load_dwordx4 v[92:95], v7, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[96:99], v7, s[8:11], 0 offen offset:64 nt
	v_mfma_f32_16x16x32_bf16 v[100:103], v[36:39], v[100:103], v[88:91]
	buffer_load_dwordx4 v[36:39], v7, s[8:11], 0 offen offset:128 nt
	s_nop 1
	buffer_load_dwordx4 v[88:91], v7, s[8:11], 0 offen offset:192 nt
	v_and_b32_e32 v7, 3, v0
	v_lshlrev_b32_e32 v7, 2, v7
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[32:35], v[32:35], v[104:107], v[100:103]
	v_and_or_b32 v7, v8, s6, v7
	s_nop 1
	ds_read_b128 v[100:103], v6 offset:20864
	v_mfma_f32_16x16x32_bf16 v[28:31], v[28:31], v[108:111], v[32:35]
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[22:25], v[100:103], v[28:31]
	s_nop 7
	ds_write_b128 v5, v[22:25] offset:192
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[6:7], vcc
	s_cbranch_execz .LBB0_46
	v_add_u32_e32 v10, 0xc0, v7
	ds_read2st64_b32 v[8:9], v10 offset1:4
	ds_read2st64_b32 v[22:23], v10 offset0:8 offset1:12
	ds_read2st64_b32 v[24:25], v10 offset0:16 offset1:20
	ds_read2st64_b32 v[28:29], v10 offset0:24 offset1:28
	s_lshl_b32 s8, s14, 8
	s_addk_i32 s8, 0x2350
	v_mov_b32_e32 v19, s33
	s_waitcnt lgkmcnt(3)
	v_add_f32_e32 v8, 0, v8
	v_add_f32_e32 v8, v8, v9
	s_waitcnt lgkmcnt(2)
	v_add_f32_e32 v8, v8, v22
	v_add_f32_e32 v8, v8, v23
	s_waitcnt lgkmcnt(1)
	v_add_f32_e32 v8, v8, v24
	v_add_f32_e32 v8, v8, v25
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v8, v8, v28
	v_add_f32_e32 v8, v8, v29
	v_cvt_pk_bf16_f32 v8, v8, s0
	v_lshlrev_b32_e32 v18, 16, v8
	v_lshl_add_u32 v8, v0, 3, s8
	s_mov_b32 s72, s66
	buffer_store_dwordx2 v[18:19], v8, s[72:75], 0 offen sc1
.LBB0_46:
	s_or_b64 exec, exec, s[6:7]
	s_barrier
	s_and_saveexec_b64 s[6:7], s[22:23]
	s_cbranch_execz .LBB0_48
	s_memrealtime s[14:15]
	v_mov_b32_e32 v8, 0
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[18:19], s[14:15]
	ds_write_b64 v8, v[18:19] offset:40
.LBB0_48:
	s_or_b64 exec, exec, s[6:7]
	ds_read_b128 v[22:25], v6 offset:8384
	ds_read_b128 v[28:31], v6 offset:8448
	v_add_lshl_u32 v4, v17, v4, 1
	s_mov_b32 s8, s46
	v_add_lshl_u32 v3, v17, v3, 1
	s_waitcnt vmcnt(3) lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[92:95], v[22:25], 0
	v_add_lshl_u32 v2, v17, v2, 1
	s_cmpk_lt_u32 s12, 0x189
	s_cselect_b64 s[6:7], -1, 0
	s_waitcnt vmcnt(2) lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[96:99], v[28:31], v[22:25]
	ds_read_b128 v[28:31], v6 offset:8512
	ds_read_b128 v[32:35], v6 offset:8576
	s_waitcnt vmcnt(1) lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[36:39], v[28:31], v[22:25]
	s_waitcnt vmcnt(0) lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[88:91], v[32:35], v[22:25]
	ds_read_b128 v[28:31], v13 offset:8384
	ds_read_b128 v[32:35], v14 offset:8384
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[84:87], v[28:31], v[22:25]
	ds_read_b128 v[28:31], v6 offset:10496
	ds_read_b128 v[36:39], v6 offset:10560
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[76:79], v[28:31], v[22:25]
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[80:83], v[36:39], v[22:25]
	ds_read_b128 v[28:31], v6 offset:10624
	ds_read_b128 v[36:39], v6 offset:12544
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[64:67], v[28:31], v[22:25]
	v_mfma_f32_16x16x32_bf16 v[22:25], v[68:71], v[32:35], v[22:25]
	ds_read_b128 v[28:31], v6 offset:12608
	ds_read_b128 v[32:35], v6 offset:12672
	s_waitcnt lgkmcnt(2)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[72:75], v[36:39], v[22:25]
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[56:59], v[28:31], v[22:25]
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[60:63], v[32:35], v[22:25]
	ds_read_b128 v[28:31], v15 offset:8384
	ds_read_b128 v[32:35], v6 offset:14592
	ds_read_b128 v[36:39], v16 offset:8384
	ds_read_b128 v[16:19], v6 offset:18752
	s_waitcnt lgkmcnt(3)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[52:55], v[28:31], v[22:25]
	ds_read_b128 v[28:31], v6 offset:14656
	s_waitcnt lgkmcnt(3)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[44:47], v[32:35], v[22:25]
	buffer_load_dwordx4 v[32:35], v4, s[8:11], 0 offen nt
	ds_read_b128 v[44:47], v6 offset:14720
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[48:51], v[28:31], v[22:25]
	buffer_load_dwordx4 v[28:31], v4, s[8:11], 0 offen offset:64 nt
	ds_read_b128 v[48:51], v6 offset:16640
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[40:43], v[44:47], v[22:25]
	buffer_load_dwordx4 v[40:43], v4, s[8:11], 0 offen offset:128 nt
	ds_read_b128 v[44:47], v6 offset:16768
	s_waitcnt vmcnt(2)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[32:35], v[36:39], v[22:25]
	buffer_load_dwordx4 v[32:35], v4, s[8:11], 0 offen offset:192 nt
	ds_read_b128 v[36:39], v6 offset:16704
	s_waitcnt vmcnt(2) lgkmcnt(2)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[28:31], v[48:51], v[22:25]
	buffer_load_dwordx4 v[28:31], v3, s[8:11], 0 offen nt
	s_waitcnt vmcnt(2) lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[40:43], v[36:39], v[22:25]
	buffer_load_dwordx4 v[36:39], v3, s[8:11], 0 offen offset:64 nt
	ds_read_b128 v[40:43], v12 offset:8384
	s_waitcnt vmcnt(2)
	v_mfma_f32_16x16x32_bf16 v[12:15], v[32:35], v[44:47], v[22:25]
	ds_read_b128 v[32:35], v6 offset:18688
	ds_read_b128 v[44:47], v11 offset:8384
	s_nop 1
	buffer_load_dwordx4 v[22:25], v3, s[8:11], 0 offen offset:128 nt
	s_waitcnt vmcnt(2) lgkmcnt(2)
	v_mfma_f32_16x16x32_bf16 v[8:11], v[28:31], v[40:43], v[12:15]
	s_nop 2
	buffer_load_dwordx4 v[12:15], v3, s[8:11], 0 offen offset:192 nt
	s_waitcnt vmcnt(2) lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[8:11], v[36:39], v[32:35], v[8:11]
	buffer_load_dwordx4 v[28:31], v2, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[32:35], v2, s[8:11], 0 offen offset:64 nt
	s_waitcnt vmcnt(3)
	v_mfma_f32_16x16x32_bf16 v[8:11], v[22:25], v[16:19], v[8:11]
	ds_read_b128 v[16:19], v6 offset:18816
	ds_read_b128 v[22:25], v6 offset:20736
	s_waitcnt vmcnt(2) lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[8:11], v[12:15], v[16:19], v[8:11]
	buffer_load_dwordx4 v[12:15], v2, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[16:19], v2, s[8:11], 0 offen offset:192 nt
	s_and_b64 s[8:9], vcc, s[6:7]
	s_waitcnt vmcnt(3)
	v_mfma_f32_16x16x32_bf16 v[8:11], v[28:31], v[44:47], v[8:11]
	s_waitcnt vmcnt(2) lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[8:11], v[32:35], v[22:25], v[8:11]
	ds_read_b128 v[22:25], v6 offset:20800
	ds_read_b128 v[28:31], v6 offset:20864
	s_waitcnt vmcnt(1) lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[8:11], v[12:15], v[22:25], v[8:11]
	s_waitcnt vmcnt(0) lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[8:11], v[16:19], v[28:31], v[8:11]
	s_nop 7
	ds_write_b128 v5, v[8:11] offset:192
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[6:7], s[8:9]
	s_cbranch_execz .LBB0_50
	v_add_u32_e32 v4, 0xc0, v7
	ds_read2st64_b32 v[2:3], v4 offset1:4
	ds_read2st64_b32 v[6:7], v4 offset0:8 offset1:12
	ds_read2st64_b32 v[8:9], v4 offset0:16 offset1:20
	ds_read2st64_b32 v[10:11], v4 offset0:24 offset1:28
	s_lshl_b32 s8, s12, 7
	s_addk_i32 s8, 0x2350
	v_mov_b32_e32 v5, s33
	s_waitcnt lgkmcnt(3)
	v_add_f32_e32 v2, 0, v2
	v_add_f32_e32 v2, v2, v3
	s_waitcnt lgkmcnt(2)
	v_add_f32_e32 v2, v2, v6
	v_add_f32_e32 v2, v2, v7
	s_waitcnt lgkmcnt(1)
	v_add_f32_e32 v2, v2, v8
	v_add_f32_e32 v2, v2, v9
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v2, v2, v10
	v_add_f32_e32 v2, v2, v11
	v_cvt_pk_bf16_f32 v2, v2, s0
	v_lshlrev_b32_e32 v4, 16, v2
	v_lshl_add_u32 v2, v0, 3, s8
	s_mov_b32 s72, s66
	buffer_store_dwordx2 v[4:5], v2, s[72:75], 0 offen sc1
.LBB0_50:
	s_or_b64 exec, exec, s[6:7]
	s_barrier
	s_and_saveexec_b64 s[6:7], s[22:23]
	s_cbranch_execz .LBB0_52
	s_memrealtime s[8:9]
	v_mov_b32_e32 v2, 0
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[4:5], s[8:9]
	ds_write_b64 v2, v[4:5] offset:48
.LBB0_52:
	s_or_b64 exec, exec, s[6:7]
.LBB0_53:
	s_add_i32 s6, s2, 0x100
	s_ashr_i32 s7, s6, 31
	s_lshr_b32 s7, s7, 24
	s_add_i32 s7, s6, s7
	s_and_b32 s7, s7, 0xffffff00
	s_sub_i32 s65, s6, s7
	s_sub_i32 s6, 0x15f, s65
	s_movk_i32 s12, 0x100
	s_lshr_b32 s64, s6, 8
	s_mov_b32 s67, 0
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_cbranch_scc0 .LBB0_110
	s_load_dwordx4 s[44:47], s[0:1], 0x98
	v_min_i32_e32 v3, 47, v0
	v_lshrrev_b32_e32 v4, 4, v3
	s_movk_i32 s0, 0x5f0
	v_mad_u32_u24 v29, v4, s0, v3
	v_lshlrev_b32_e32 v36, 7, v4
	v_cmp_eq_u32_e64 s[8:9], 2, v4
	v_min_i32_e32 v4, 0x17f, v0
	s_min_i32 s16, s28, 1
	s_and_b32 s49, s49, 0xffff
	s_and_b32 s81, s51, 0xffff
	s_and_b32 s53, s53, 0xffff
	s_and_b32 s85, s55, 0xffff
	s_and_b32 s57, s57, 0xffff
	s_and_b32 s89, s59, 0xffff
	s_and_b32 s61, s61, 0xffff
	s_and_b32 s93, s63, 0xffff
	s_waitcnt lgkmcnt(0)
	s_and_b32 s45, s45, 0xffff
	s_and_b32 s77, s47, 0xffff
	v_lshlrev_b32_e32 v3, 1, v0
	v_and_b32_e32 v5, 0x7f, v4
	s_movk_i32 s10, 0x80
	s_lshl_b32 s24, s16, 9
	v_lshlrev_b32_e32 v2, 2, v1
	v_lshrrev_b32_e32 v32, 5, v0
	v_and_b32_e32 v33, 0x7c, v20
	v_and_b32_e32 v3, 0x60, v3
	v_lshlrev_b32_e32 v37, 2, v27
	v_or_b32_e32 v26, 0x1800, v5
	v_subrev_co_u32_e64 v5, s[10:11], s10, v0
	v_cmp_gt_u32_e64 s[14:15], 16, v1
	s_cmp_eq_u32 s28, 0
	v_and_b32_e32 v1, 31, v0
	s_mov_b32 s79, 0x27000
	s_mov_b32 s78, -1
	s_mov_b32 s80, s50
	s_mov_b32 s84, s54
	s_mov_b32 s88, s58
	s_mov_b32 s92, s62
	s_mov_b32 s76, s46
	v_lshl_or_b32 v34, s28, 4, v27
	v_lshlrev_b32_e32 v35, 1, v3
	v_cmp_gt_u32_e64 s[0:1], 48, v0
	v_cmp_gt_u32_e64 s[6:7], 32, v0
	v_lshrrev_b32_e32 v38, 7, v4
	v_add_u32_e32 v39, 0xffffff80, v4
	v_lshlrev_b32_e32 v40, 2, v4
	v_cmp_gt_u32_e64 s[12:13], s12, v5
	v_lshlrev_b32_e32 v41, 2, v3
	v_lshl_or_b32 v42, s28, 6, v37
	s_cselect_b64 s[16:17], -1, 0
	v_lshlrev_b32_e32 v43, 2, v33
	v_lshlrev_b32_e32 v44, 2, v32
	v_cmp_eq_u32_e64 s[18:19], 0, v1
	v_cmp_gt_u32_e64 s[20:21], 16, v0
	v_mov_b32_e32 v45, 0
	s_movk_i32 s68, 0x1890
	s_mov_b32 s42, 0xbfb8aa3b
	s_brev_b32 s43, 60
	v_mov_b32_e32 v46, 0xe000
	s_mov_b32 s96, s66
	v_add_u32_e32 v47, s24, v2
	v_mov_b32_e32 v48, 0x2350
	s_branch .LBB0_56
.LBB0_55:
	s_or_b64 exec, exec, s[24:25]
	s_add_i32 s67, s67, 1
	s_cmp_lg_u32 s67, s64
	s_cbranch_scc0 .LBB0_110
.LBB0_56:
	s_lshl_b32 s24, s67, 8
	s_add_i32 s28, s24, s65
	s_mul_hi_i32 s24, s28, 0x2aaaaaab
	s_lshr_b32 s25, s24, 31
	s_ashr_i32 s24, s24, 4
	s_add_i32 s29, s24, s25
	s_mul_i32 s24, s29, 0x60
	s_cmp_lg_u32 s28, s24
	s_cselect_b64 s[24:25], -1, 0
	s_cmp_lt_i32 s28, 0
	s_cselect_b64 s[26:27], -1, 0
	s_and_b64 s[24:25], s[26:27], s[24:25]
	s_subb_u32 s69, s29, 0
	s_ashr_i32 s24, s28, 31
	s_lshr_b32 s24, s24, 29
	s_add_i32 s24, s28, s24
	s_ashr_i32 s29, s24, 3
	s_and_b32 s30, s24, -8
	s_cmp_lg_u32 s28, s30
	s_cselect_b64 s[24:25], -1, 0
	s_and_b64 s[24:25], s[26:27], s[24:25]
	s_subb_u32 s26, s29, 0
	s_mul_hi_i32 s26, s26, 0x2aaaaaab
	s_lshr_b32 s27, s26, 31
	s_lshr_b32 s26, s26, 1
	s_add_i32 s26, s26, s27
	s_mul_i32 s26, s26, 12
	s_cmp_lg_u64 s[24:25], 0
	s_subb_u32 s35, s29, s26
	s_lshl_b32 s24, s69, 2
	v_mov_b32_e32 v1, s24
	buffer_load_dword v2, v1, s[76:79], 0 offen
	s_mov_b32 s46, s78
	s_mov_b32 s47, s79
	buffer_load_dword v1, v1, s[44:47], 0 offen
	s_sub_i32 s36, s28, s30
	s_lshl_b32 s34, s35, 7
	s_lshl_b32 s27, s35, 2
	v_or_b32_e32 v4, s34, v34
	s_mov_b32 s50, s78
	s_mov_b32 s51, s79
	s_mov_b32 s86, s78
	s_mov_b32 s87, s79
	v_mov_b32_e32 v5, s27
	s_mov_b32 s82, s78
	s_mov_b32 s83, s79
	s_mov_b32 s58, s78
	s_mov_b32 s59, s79
	buffer_load_dword v51, v5, s[84:87], 0 offen
	s_mov_b32 s54, s78
	s_mov_b32 s55, s79
	s_mov_b32 s62, s78
	s_mov_b32 s63, s79
	s_mov_b32 s90, s78
	s_mov_b32 s91, s79
	s_waitcnt vmcnt(2)
	v_readfirstlane_b32 s24, v2
	s_add_i32 s25, s24, -1
	s_add_i32 s26, s25, s69
	s_lshl_b32 s26, s26, 2
	v_mov_b32_e32 v2, s26
	buffer_load_dword v2, v2, s[44:47], 0 offen
	s_lshl_b32 s26, s36, 4
	s_waitcnt vmcnt(2)
	v_readfirstlane_b32 s37, v1
	s_add_i32 s94, s34, s26
	v_or_b32_e32 v3, s26, v32
	v_or_b32_e32 v49, s26, v27
	s_max_i32 s26, s37, 0
	v_add_u32_e32 v30, s94, v29
	s_mulk_i32 s26, 0x1200
	v_add_u32_e32 v56, s26, v30
	v_lshlrev_b32_e32 v50, 7, v3
	v_lshl_or_b32 v3, v4, 8, v35
	v_lshl_add_u32 v1, v56, 1, v56
	v_lshlrev_b32_e32 v4, 2, v4
	v_lshlrev_b32_e32 v5, 4, v30
	buffer_load_dwordx4 v[18:21], v3, s[48:51], 0 offen
	buffer_load_dwordx4 v[14:17], v3, s[48:51], 0 offen offset:16
	buffer_load_dwordx4 v[10:13], v3, s[48:51], 0 offen offset:32
	buffer_load_dwordx4 v[6:9], v3, s[48:51], 0 offen offset:48
	buffer_load_dword v52, v4, s[56:59], 0 offen
	buffer_load_dwordx4 v[22:25], v5, s[80:83], 0 offen
	v_add_lshl_u32 v3, v1, s25, 1
	v_add_lshl_u32 v1, v1, s24, 1
	buffer_load_ushort v53, v3, s[52:55], 0 offen
	buffer_load_ushort v55, v3, s[52:55], 0 offen offset:4
	buffer_load_ushort v54, v1, s[52:55], 0 offen
	v_lshlrev_b32_e32 v28, 1, v49
	s_mul_i32 s58, s67, 5
	s_waitcnt vmcnt(9)
	v_readfirstlane_b32 s38, v2
	s_max_i32 s24, s38, 0
	s_mul_i32 s24, s24, 12
	s_add_i32 s24, s24, s35
	v_lshl_add_u32 v1, s24, 14, v50
	v_or_b32_e32 v1, v1, v33
	v_lshlrev_b32_e32 v1, 2, v1
	buffer_load_dwordx4 v[2:5], v1, s[60:63], 0 offen
	s_nop 0
	buffer_load_ushort v1, v28, s[88:91], 0 offen
	s_and_saveexec_b64 s[24:25], s[22:23]
	s_cbranch_execz .LBB0_58
	s_memrealtime s[26:27]
	s_lshl_b32 s28, s58, 3
	v_mov_b32_e32 v28, s28
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[58:59], s[26:27]
	ds_write_b64 v28, v[58:59] offset:144
	s_memrealtime s[26:27]
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[58:59], s[26:27]
	ds_write_b64 v45, v[58:59] offset:56
.LBB0_58:
	s_or_b64 exec, exec, s[24:25]
	s_cmp_gt_i32 s37, 0
	s_cselect_b64 s[26:27], -1, 0
	s_waitcnt vmcnt(0)
	v_lshlrev_b32_e32 v1, 16, v1
	v_lshlrev_b32_e32 v28, 16, v55
	s_mul_i32 s39, s69, 0x1890
	s_mul_i32 s40, s69, 12
	s_and_saveexec_b64 s[24:25], s[0:1]
	s_cbranch_execz .LBB0_69
	v_add_lshl_u32 v57, v30, s39, 3
	v_add_u32_e32 v30, 0x2000, v57
	s_mov_b32 s72, s66
	;;#ASMSTART
	; kda-sim: poll k.conv PROJ
	;;#ASMEND
	buffer_load_dwordx2 v[30:31], v30, s[72:75], 0 offen offset:848 sc1
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e32 vcc, s33, v31
	s_and_saveexec_b64 s[28:29], vcc
	s_cbranch_execz .LBB0_63
	v_add_u32_e32 v57, 0x2350, v57
	s_mov_b64 s[30:31], 0
.LBB0_61:
	s_mov_b32 s72, s66
	s_sleep 1
	buffer_load_dwordx2 v[30:31], v57, s[72:75], 0 offen sc1
	s_waitcnt vmcnt(0)
	v_cmp_eq_u32_e32 vcc, s33, v31
	s_or_b64 s[30:31], vcc, s[30:31]
	s_andn2_b64 exec, exec, s[30:31]
	s_cbranch_execnz .LBB0_61
	s_or_b64 exec, exec, s[30:31]
.LBB0_63:
	s_or_b64 exec, exec, s[28:29]
	s_and_b64 s[28:29], s[26:27], exec
	s_cselect_b32 s28, 1, 0
	s_cmp_lg_u32 s28, 1
	s_cbranch_scc1 .LBB0_65
	v_mul_lo_u32 v56, v56, 6
	s_mov_b32 s54, s78
	s_mov_b32 s55, s79
	v_lshrrev_b32_e32 v31, 16, v30
	buffer_store_short v54, v56, s[52:55], 0 offen
	buffer_store_short v55, v56, s[52:55], 0 offen offset:2
	buffer_store_short v31, v56, s[52:55], 0 offen offset:4
.LBB0_65:
	v_lshlrev_b32_e32 v55, 16, v54
	v_lshlrev_b32_e32 v54, 16, v53
	v_pk_mul_f32 v[22:23], v[54:55], v[22:23]
	v_mov_b32_e32 v56, v28
	v_mov_b32_e32 v57, v30
	v_add_f32_e32 v22, 0, v22
	v_pk_mul_f32 v[24:25], v[56:57], v[24:25]
	v_add_f32_e32 v22, v22, v23
	v_add_f32_e32 v22, v22, v24
	v_add_f32_e32 v22, v22, v25
	v_mul_f32_e32 v23, 0xbfb8aa3b, v22
	v_exp_f32_e32 v23, v23
	s_nop 0
	v_add_f32_e32 v23, 1.0, v23
	v_div_scale_f32 v24, s[28:29], v23, v23, 1.0
	v_rcp_f32_e32 v25, v24
	v_div_scale_f32 v28, vcc, 1.0, v23, 1.0
	v_fma_f32 v30, -v24, v25, 1.0
	v_fmac_f32_e32 v25, v30, v25
	v_mul_f32_e32 v30, v28, v25
	v_fma_f32 v31, -v24, v30, v28
	v_fmac_f32_e32 v30, v31, v25
	v_fma_f32 v24, -v24, v30, v28
	v_div_fmas_f32 v24, v24, v25, v30
	v_div_fixup_f32 v23, v24, v23, 1.0
	v_mul_f32_e32 v22, v22, v23
	v_cvt_pk_bf16_f32 v22, v22, s0
	v_lshlrev_b32_e32 v22, 16, v22
	s_and_saveexec_b64 s[28:29], s[6:7]
	s_cbranch_execz .LBB0_67
	s_add_i32 s30, s40, s35
	v_lshl_or_b32 v23, s30, 8, v36
	v_add_u32_e32 v24, v23, v49
	v_mov_b32_e32 v23, s33
	v_lshl_add_u32 v24, v24, 3, v46
	s_mov_b32 s72, s66
	buffer_store_dwordx2 v[22:23], v24, s[72:75], 0 offen offset:2000 sc1
.LBB0_67:
	s_or_b64 exec, exec, s[28:29]
	s_and_b64 exec, exec, s[8:9]
	ds_write_b32 v37, v22 offset:192
.LBB0_69:
	s_or_b64 exec, exec, s[24:25]
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[24:25], s[22:23]
	s_cbranch_execz .LBB0_71
	s_memrealtime s[28:29]
	s_lshl_b32 s30, s58, 3
	v_mov_b32_e32 v22, s30
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[24:25], s[28:29]
	ds_write_b64 v22, v[24:25] offset:152
	s_memrealtime s[28:29]
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[22:23], s[28:29]
	ds_write_b64 v45, v[22:23] offset:64
.LBB0_71:
	s_or_b64 exec, exec, s[24:25]
	v_add_u32_e32 v22, s69, v38
	v_mad_u64_u32 v[22:23], s[24:25], v22, s68, v[26:27]
	s_add_i32 s30, s39, 0x188f
	v_min_i32_e32 v22, s30, v22
	v_lshlrev_b32_e32 v24, 3, v22
	v_add_u32_e32 v22, 0x2000, v24
	s_mov_b32 s97, s73
	s_mov_b32 s98, s74
	s_mov_b32 s99, s75
	;;#ASMSTART
	; kda-sim: poll k.gates PROJ
	;;#ASMEND
	buffer_load_dwordx2 v[22:23], v22, s[96:99], 0 offen offset:848 sc1
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e32 vcc, s33, v23
	s_and_saveexec_b64 s[24:25], vcc
	s_cbranch_execz .LBB0_75
	v_add_u32_e32 v24, 0x2350, v24
	s_mov_b64 s[28:29], 0
.LBB0_73:
	s_mov_b32 s97, s73
	s_mov_b32 s98, s74
	s_mov_b32 s99, s75
	s_sleep 1
	buffer_load_dwordx2 v[22:23], v24, s[96:99], 0 offen sc1
	s_waitcnt vmcnt(0)
	v_cmp_eq_u32_e32 vcc, s33, v23
	s_or_b64 s[28:29], vcc, s[28:29]
	s_andn2_b64 exec, exec, s[28:29]
	s_cbranch_execnz .LBB0_73
	s_or_b64 exec, exec, s[28:29]
.LBB0_75:
	s_or_b64 exec, exec, s[24:25]
	s_add_i32 s31, s40, s35
	s_lshl_b32 s24, s31, 8
	v_add_u32_e32 v23, s24, v39
	v_max_i32_e32 v23, s24, v23
	v_lshlrev_b32_e32 v23, 3, v23
	v_add_u32_e32 v24, 0xe000, v23
	s_mov_b32 s97, s73
	s_mov_b32 s98, s74
	s_mov_b32 s99, s75
	;;#ASMSTART
	; kda-sim: poll k.gates QK
	;;#ASMEND
	buffer_load_dwordx2 v[24:25], v24, s[96:99], 0 offen offset:2000 sc1
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e32 vcc, s33, v25
	s_and_saveexec_b64 s[24:25], vcc
	s_cbranch_execz .LBB0_79
	v_add_u32_e32 v23, 0xe7d0, v23
	s_mov_b64 s[28:29], 0
.LBB0_77:
	s_mov_b32 s97, s73
	s_mov_b32 s98, s74
	s_mov_b32 s99, s75
	s_sleep 1
	buffer_load_dwordx2 v[24:25], v23, s[96:99], 0 offen sc1
	s_waitcnt vmcnt(0)
	v_cmp_eq_u32_e32 vcc, s33, v25
	s_or_b64 s[28:29], vcc, s[28:29]
	s_andn2_b64 exec, exec, s[28:29]
	s_cbranch_execnz .LBB0_77
	s_or_b64 exec, exec, s[28:29]
.LBB0_79:
	s_or_b64 exec, exec, s[24:25]
	s_and_saveexec_b64 s[24:25], s[10:11]
	ds_write_b32 v40, v22 offset:256
	s_or_b64 exec, exec, s[24:25]
	s_and_saveexec_b64 s[24:25], s[12:13]
	ds_write_b32 v40, v24 offset:256
	s_or_b64 exec, exec, s[24:25]
	s_and_saveexec_b64 s[24:25], s[22:23]
	s_cbranch_execz .LBB0_88
	s_add_i32 s28, s35, s39
	s_lshl_b32 s28, s28, 3
	s_add_i32 s29, s28, 0xe000
	s_mov_b32 s97, s73
	s_mov_b32 s98, s74
	s_mov_b32 s99, s75
	v_mov_b32_e32 v22, s29
	;;#ASMSTART
	; kda-sim: poll k.gates PROJ
	;;#ASMEND
	buffer_load_dwordx2 v[22:23], v22, s[96:99], 0 offen offset:1872 sc1
	s_waitcnt vmcnt(0)
	v_cmp_eq_u32_e32 vcc, s33, v23
	s_cbranch_vccnz .LBB0_87
	s_add_i32 s28, s28, 0xe750
.LBB0_86:
	s_mov_b32 s97, s73
	s_mov_b32 s98, s74
	s_mov_b32 s99, s75
	v_mov_b32_e32 v22, s28
	s_sleep 1
	buffer_load_dwordx2 v[22:23], v22, s[96:99], 0 offen sc1
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e32 vcc, s33, v23
	s_cbranch_vccnz .LBB0_86
.LBB0_87:
	v_mul_f32_e32 v22, 0xbfb8aa3b, v22
	v_exp_f32_e32 v22, v22
	s_nop 0
	v_add_f32_e32 v22, 1.0, v22
	v_div_scale_f32 v23, s[28:29], v22, v22, 1.0
	v_rcp_f32_e32 v24, v23
	v_div_scale_f32 v25, vcc, 1.0, v22, 1.0
	v_fma_f32 v28, -v23, v24, 1.0
	v_fmac_f32_e32 v24, v28, v24
	v_mul_f32_e32 v28, v25, v24
	v_fma_f32 v30, -v23, v28, v25
	v_fmac_f32_e32 v28, v30, v24
	v_fma_f32 v23, -v23, v28, v25
	v_div_fmas_f32 v23, v23, v24, v28
	v_div_fixup_f32 v22, v23, v22, 1.0
	ds_write_b32 v45, v22 offset:2304
.LBB0_88:
	s_or_b64 exec, exec, s[24:25]
	s_waitcnt lgkmcnt(0)
	s_barrier
	v_and_b32_e32 v65, 0xffff0000, v14
	v_lshlrev_b32_e32 v64, 16, v14
	v_and_b32_e32 v67, 0xffff0000, v15
	v_lshlrev_b32_e32 v66, 16, v15
	v_and_b32_e32 v69, 0xffff0000, v16
	v_lshlrev_b32_e32 v68, 16, v16
	v_and_b32_e32 v71, 0xffff0000, v17
	v_lshlrev_b32_e32 v70, 16, v17
	ds_read_b128 v[14:17], v41 offset:256
	v_and_b32_e32 v31, 0xffff0000, v18
	v_lshlrev_b32_e32 v30, 16, v18
	v_and_b32_e32 v73, 0xffff0000, v10
	v_lshlrev_b32_e32 v72, 16, v10
	v_and_b32_e32 v75, 0xffff0000, v11
	v_lshlrev_b32_e32 v74, 16, v11
	s_waitcnt lgkmcnt(0)
	v_pk_mul_f32 v[10:11], v[14:15], v[30:31]
	v_and_b32_e32 v59, 0xffff0000, v19
	v_lshlrev_b32_e32 v58, 16, v19
	v_and_b32_e32 v61, 0xffff0000, v20
	v_lshlrev_b32_e32 v60, 16, v20
	v_and_b32_e32 v63, 0xffff0000, v21
	v_lshlrev_b32_e32 v62, 16, v21
	ds_read_b128 v[18:21], v41 offset:272
	ds_read_b128 v[22:25], v41 offset:288
	ds_read_b128 v[54:57], v41 offset:304
	v_add_f32_e32 v10, 0, v10
	v_add_f32_e32 v14, v10, v11
	v_pk_mul_f32 v[10:11], v[16:17], v[58:59]
	v_and_b32_e32 v31, 0xffff0000, v12
	v_add_f32_e32 v10, v14, v10
	v_add_f32_e32 v14, v10, v11
	s_waitcnt lgkmcnt(2)
	v_pk_mul_f32 v[10:11], v[18:19], v[60:61]
	v_lshlrev_b32_e32 v30, 16, v12
	v_add_f32_e32 v10, v14, v10
	v_add_f32_e32 v14, v10, v11
	v_pk_mul_f32 v[10:11], v[20:21], v[62:63]
	s_nop 0
	v_add_f32_e32 v10, v14, v10
	v_add_f32_e32 v14, v10, v11
	s_waitcnt lgkmcnt(1)
	v_pk_mul_f32 v[10:11], v[22:23], v[64:65]
	v_and_b32_e32 v23, 0xffff0000, v7
	v_add_f32_e32 v10, v14, v10
	v_add_f32_e32 v14, v10, v11
	v_pk_mul_f32 v[10:11], v[24:25], v[66:67]
	v_and_b32_e32 v25, 0xffff0000, v13
	v_add_f32_e32 v10, v14, v10
	v_add_f32_e32 v14, v10, v11
	s_waitcnt lgkmcnt(0)
	v_pk_mul_f32 v[10:11], v[54:55], v[68:69]
	v_lshlrev_b32_e32 v24, 16, v13
	v_add_f32_e32 v10, v14, v10
	ds_read_b128 v[14:17], v41 offset:320
	v_add_f32_e32 v18, v10, v11
	v_pk_mul_f32 v[10:11], v[56:57], v[70:71]
	s_nop 0
	v_add_f32_e32 v10, v18, v10
	v_add_f32_e32 v22, v10, v11
	ds_read_b128 v[18:21], v41 offset:336
	s_waitcnt lgkmcnt(1)
	v_pk_mul_f32 v[10:11], v[14:15], v[72:73]
	s_waitcnt lgkmcnt(0)
	v_pk_mul_f32 v[18:19], v[18:19], v[30:31]
	v_add_f32_e32 v10, v22, v10
	v_add_f32_e32 v14, v10, v11
	v_pk_mul_f32 v[10:11], v[16:17], v[74:75]
	v_lshlrev_b32_e32 v22, 16, v7
	v_add_f32_e32 v10, v14, v10
	ds_read_b128 v[14:17], v41 offset:352
	v_add_f32_e32 v28, v10, v11
	v_and_b32_e32 v7, 0xffff0000, v6
	v_lshlrev_b32_e32 v6, 16, v6
	v_add_f32_e32 v18, v28, v18
	ds_read_b128 v[10:13], v41 offset:368
	s_waitcnt lgkmcnt(1)
	v_pk_mul_f32 v[6:7], v[14:15], v[6:7]
	v_pk_mul_f32 v[14:15], v[20:21], v[24:25]
	v_add_f32_e32 v18, v18, v19
	v_add_f32_e32 v14, v18, v14
	v_add_f32_e32 v14, v14, v15
	v_add_f32_e32 v6, v14, v6
	v_pk_mul_f32 v[16:17], v[16:17], v[22:23]
	v_add_f32_e32 v6, v6, v7
	v_add_f32_e32 v6, v6, v16
	v_add_f32_e32 v14, v6, v17
	v_and_b32_e32 v7, 0xffff0000, v9
	v_lshlrev_b32_e32 v6, 16, v9
	v_and_b32_e32 v9, 0xffff0000, v8
	v_lshlrev_b32_e32 v8, 16, v8
	s_waitcnt lgkmcnt(0)
	v_pk_mul_f32 v[8:9], v[10:11], v[8:9]
	v_pk_mul_f32 v[6:7], v[12:13], v[6:7]
	v_add_f32_e32 v8, v14, v8
	v_add_f32_e32 v8, v8, v9
	v_add_f32_e32 v6, v8, v6
	v_add_f32_e32 v6, v6, v7
	v_mov_b32_e32 v7, v6
	v_mov_b32_e32 v8, v6
	s_nop 1
	v_permlane16_swap_b32_e32 v7, v8
	v_cmp_eq_u32_e32 vcc, v7, v6
	s_nop 1
	v_cndmask_b32_e32 v7, v7, v8, vcc
	v_add_f32_e32 v6, v6, v7
	v_mov_b32_e32 v7, v6
	v_mov_b32_e32 v8, v6
	s_nop 1
	v_permlane32_swap_b32_e32 v7, v8
	s_and_saveexec_b64 s[24:25], s[14:15]
	s_cbranch_execz .LBB0_90
	v_cmp_eq_u32_e32 vcc, v7, v6
	v_mul_f32_e32 v9, 0x3fb8aa3b, v51
	v_exp_f32_e32 v9, v9
	v_cndmask_b32_e32 v7, v7, v8, vcc
	v_add_f32_e32 v6, v6, v7
	v_cvt_pk_bf16_f32 v6, v6, s0
	v_lshlrev_b32_e32 v6, 16, v6
	v_add_f32_e32 v6, v52, v6
	v_mul_f32_e32 v6, v9, v6
	v_mul_f32_e32 v6, 0xbfb8aa3b, v6
	v_exp_f32_e32 v6, v6
	s_nop 0
	v_add_f32_e32 v6, 1.0, v6
	v_div_scale_f32 v7, s[28:29], v6, v6, 1.0
	v_rcp_f32_e32 v8, v7
	v_div_scale_f32 v9, vcc, 1.0, v6, 1.0
	v_fma_f32 v10, -v7, v8, 1.0
	v_fmac_f32_e32 v8, v10, v8
	v_mul_f32_e32 v10, v9, v8
	v_fma_f32 v11, -v7, v10, v9
	v_fmac_f32_e32 v10, v11, v8
	v_fma_f32 v7, -v7, v10, v9
	v_div_fmas_f32 v7, v7, v8, v10
	v_div_fixup_f32 v6, v7, v6, 1.0
	v_mul_f32_e32 v6, 0xc0a00000, v6
	v_mul_f32_e32 v6, 0x3fb8aa3b, v6
	v_exp_f32_e32 v6, v6
	ds_write_b32 v42, v6 offset:1792
.LBB0_90:
	s_or_b64 exec, exec, s[24:25]
	ds_read2st64_b32 v[6:7], v47 offset0:3 offset1:4
	s_waitcnt lgkmcnt(0)
	v_mul_f32_e32 v8, v6, v6
	v_mul_f32_e32 v9, v7, v7
	v_add_f32_e32 v8, v8, v9
	v_mov_b32_e32 v9, v8
	v_mov_b32_e32 v10, v8
	s_nop 1
	v_permlane32_swap_b32_e32 v9, v10
	v_cmp_eq_u32_e32 vcc, v9, v8
	s_nop 1
	v_cndmask_b32_e32 v9, v9, v10, vcc
	v_add_f32_e32 v8, v8, v9
	v_mov_b32_e32 v9, v8
	v_mov_b32_e32 v10, v8
	s_nop 1
	v_permlane16_swap_b32_e32 v9, v10
	v_cmp_eq_u32_e32 vcc, v9, v8
	s_nop 1
	v_cndmask_b32_e32 v9, v9, v10, vcc
	v_add_f32_e32 v8, v8, v9
	ds_swizzle_b32 v9, v8 offset:swizzle(SWAP,8)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v8, v8, v9
	ds_swizzle_b32 v9, v8 offset:swizzle(SWAP,4)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v8, v8, v9
	ds_swizzle_b32 v9, v8 offset:swizzle(SWAP,2)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v8, v8, v9
	ds_swizzle_b32 v9, v8 offset:swizzle(SWAP,1)
	s_and_saveexec_b64 s[24:25], s[10:11]
	s_cbranch_execz .LBB0_92
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v8, v8, v9
	v_add_f32_e32 v8, 0x358637bd, v8
	v_rsq_f32_e32 v8, v8
	s_nop 0
	v_mul_f32_e32 v9, 0x3db504f3, v8
	v_cndmask_b32_e64 v8, v8, v9, s[16:17]
	v_mul_f32_e32 v6, v6, v8
	v_mul_f32_e32 v7, v7, v8
	ds_write2st64_b32 v47, v6, v7 offset0:3 offset1:4
.LBB0_92:
	s_or_b64 exec, exec, s[24:25]
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[24:25], s[22:23]
	s_cbranch_execz .LBB0_94
	s_memrealtime s[28:29]
	s_lshl_b32 s39, s58, 3
	v_mov_b32_e32 v6, s39
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[8:9], s[28:29]
	ds_write_b64 v6, v[8:9] offset:160
	s_memrealtime s[28:29]
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[6:7], s[28:29]
	ds_write_b64 v45, v[6:7] offset:72
.LBB0_94:
	s_or_b64 exec, exec, s[24:25]
	ds_read_b32 v18, v45 offset:2304
	ds_read_b128 v[6:9], v43 offset:1792
	ds_read_b128 v[10:13], v43 offset:1280
	s_cmp_gt_i32 s38, 0
	s_cselect_b64 vcc, -1, 0
	v_cndmask_b32_e32 v3, 0, v3, vcc
	v_cndmask_b32_e32 v2, 0, v2, vcc
	s_waitcnt lgkmcnt(1)
	v_pk_mul_f32 v[2:3], v[2:3], v[6:7]
	v_cndmask_b32_e32 v5, 0, v5, vcc
	v_cndmask_b32_e32 v4, 0, v4, vcc
	v_pk_mul_f32 v[4:5], v[4:5], v[8:9]
	ds_read_b128 v[6:9], v43 offset:768
	s_waitcnt lgkmcnt(1)
	v_pk_mul_f32 v[16:17], v[10:11], v[2:3]
	v_pk_mul_f32 v[14:15], v[12:13], v[4:5]
	v_add_f32_e32 v16, v16, v17
	v_add_f32_e32 v14, v16, v14
	v_add_f32_e32 v14, v14, v15
	v_mov_b32_e32 v15, v14
	v_mov_b32_e32 v16, v14
	s_nop 1
	v_permlane16_swap_b32_e32 v15, v16
	v_cmp_eq_u32_e64 s[24:25], v15, v14
	s_nop 1
	v_cndmask_b32_e64 v15, v15, v16, s[24:25]
	v_add_f32_e32 v14, v14, v15
	ds_swizzle_b32 v15, v14 offset:swizzle(SWAP,8)
	ds_read_b32 v16, v44 offset:192
	s_waitcnt lgkmcnt(1)
	v_add_f32_e32 v14, v14, v15
	ds_swizzle_b32 v15, v14 offset:swizzle(SWAP,4)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v14, v14, v15
	ds_swizzle_b32 v15, v14 offset:swizzle(SWAP,2)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v14, v14, v15
	ds_swizzle_b32 v15, v14 offset:swizzle(SWAP,1)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v14, v14, v15
	v_sub_f32_e32 v14, v16, v14
	v_mul_f32_e32 v14, v18, v14
	v_pk_mul_f32 v[10:11], v[10:11], v[14:15] op_sel_hi:[1,0]
	v_pk_mul_f32 v[12:13], v[12:13], v[14:15] op_sel_hi:[1,0]
	v_pk_add_f32 v[2:3], v[2:3], v[10:11]
	v_pk_add_f32 v[4:5], v[4:5], v[12:13]
	v_pk_mul_f32 v[6:7], v[6:7], v[2:3]
	v_pk_mul_f32 v[8:9], v[8:9], v[4:5]
	v_add_f32_e32 v6, v6, v7
	v_add_f32_e32 v6, v8, v6
	v_add_f32_e32 v6, v9, v6
	v_mov_b32_e32 v7, v6
	v_mov_b32_e32 v8, v6
	s_nop 1
	v_permlane16_swap_b32_e32 v7, v8
	v_cmp_eq_u32_e64 s[24:25], v7, v6
	s_nop 1
	v_cndmask_b32_e64 v7, v7, v8, s[24:25]
	v_add_f32_e32 v6, v6, v7
	ds_swizzle_b32 v7, v6 offset:swizzle(SWAP,8)
	s_and_b64 s[24:25], s[26:27], vcc
	s_and_b64 s[24:25], s[24:25], exec
	s_cselect_b32 s24, 1, 0
	s_cmp_lg_u32 s24, 1
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v6, v6, v7
	ds_swizzle_b32 v7, v6 offset:swizzle(SWAP,4)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v6, v6, v7
	ds_swizzle_b32 v7, v6 offset:swizzle(SWAP,2)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v6, v6, v7
	ds_swizzle_b32 v7, v6 offset:swizzle(SWAP,1)
	s_cbranch_scc1 .LBB0_96
	s_mul_i32 s24, s37, 12
	s_add_i32 s24, s24, s35
	v_lshl_add_u32 v8, s24, 14, v50
	v_or_b32_e32 v8, v8, v33
	v_lshlrev_b32_e32 v8, 2, v8
	s_mov_b32 s62, s78
	s_mov_b32 s63, s79
	buffer_store_dwordx4 v[2:5], v8, s[60:63], 0 offen
.LBB0_96:
	s_and_saveexec_b64 s[24:25], s[18:19]
	s_cbranch_execz .LBB0_98
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v2, v6, v7
	v_cvt_pk_bf16_f32 v2, v2, s0
	v_lshlrev_b32_e32 v2, 16, v2
	v_cndmask_b32_e32 v2, 0, v2, vcc
	ds_write_b32 v44, v2 offset:2320
.LBB0_98:
	s_or_b64 exec, exec, s[24:25]
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[24:25], s[22:23]
	s_cbranch_execz .LBB0_100
	ds_read_b128 v[2:5], v45 offset:2368
	ds_read_b128 v[6:9], v45 offset:2352
	ds_read_b128 v[10:13], v45 offset:2336
	ds_read_b128 v[14:17], v45 offset:2320
	s_lshl_b32 s26, s31, 6
	s_waitcnt lgkmcnt(3)
	v_pk_mul_f32 v[2:3], v[2:3], v[2:3]
	s_waitcnt lgkmcnt(2)
	v_pk_mul_f32 v[6:7], v[6:7], v[6:7]
	s_waitcnt lgkmcnt(1)
	v_pk_mul_f32 v[10:11], v[10:11], v[10:11]
	s_waitcnt lgkmcnt(0)
	v_pk_mul_f32 v[14:15], v[14:15], v[14:15]
	v_pk_mul_f32 v[16:17], v[16:17], v[16:17]
	v_add_f32_e32 v14, v14, v15
	v_add_f32_e32 v14, v14, v16
	v_add_f32_e32 v14, v14, v17
	v_add_f32_e32 v10, v14, v10
	v_pk_mul_f32 v[12:13], v[12:13], v[12:13]
	v_add_f32_e32 v10, v10, v11
	v_add_f32_e32 v10, v10, v12
	v_add_f32_e32 v10, v10, v13
	v_add_f32_e32 v6, v10, v6
	v_pk_mul_f32 v[8:9], v[8:9], v[8:9]
	v_add_f32_e32 v6, v6, v7
	v_add_f32_e32 v6, v6, v8
	v_add_f32_e32 v6, v6, v9
	v_add_f32_e32 v2, v6, v2
	v_pk_mul_f32 v[4:5], v[4:5], v[4:5]
	v_add_f32_e32 v2, v2, v3
	s_lshl3_add_u32 s26, s36, s26
	v_add_f32_e32 v2, v2, v4
	s_add_i32 s26, s26, 0x14000
	v_add_f32_e32 v2, v2, v5
	v_mov_b32_e32 v3, s33
	s_mov_b32 s97, s73
	s_mov_b32 s98, s74
	s_mov_b32 s99, s75
	v_mov_b32_e32 v4, s26
	buffer_store_dwordx2 v[2:3], v4, s[96:99], 0 offen offset:2000 sc1
.LBB0_100:
	s_or_b64 exec, exec, s[24:25]
	s_barrier
	s_and_saveexec_b64 s[24:25], s[22:23]
	s_cbranch_execz .LBB0_102
	s_memrealtime s[26:27]
	s_lshl_b32 s28, s58, 3
	v_mov_b32_e32 v2, s28
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[4:5], s[26:27]
	ds_write_b64 v2, v[4:5] offset:168
	s_memrealtime s[26:27]
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[2:3], s[26:27]
	ds_write_b64 v45, v[2:3] offset:80
.LBB0_102:
	s_or_b64 exec, exec, s[24:25]
	s_and_saveexec_b64 s[46:47], s[20:21]
	s_cbranch_execz .LBB0_108
	s_add_i32 s24, s30, s34
	s_addk_i32 s24, 0xf971
	s_lshl_b32 s87, s31, 6
	v_add_u32_e32 v2, s24, v49
	s_add_i32 s59, s87, 0x14808
	s_add_i32 s62, s87, 0x147d0
	s_add_i32 s63, s87, 0x147d8
	s_add_i32 s72, s87, 0x147e0
	s_add_i32 s82, s87, 0x147e8
	s_add_i32 s83, s87, 0x147f0
	s_add_i32 s86, s87, 0x147f8
	s_add_i32 s87, s87, 0x14800
	v_lshl_add_u32 v20, v2, 3, v48
	s_mov_b64 s[50:51], 0
	;;#ASMSTART
	; kda-sim: poll k.norm ONRM+PROJ
	;;#ASMEND
	s_branch .LBB0_105
.LBB0_104:
	s_or_b64 exec, exec, s[24:25]
	s_and_b64 s[24:25], exec, s[54:55]
	s_or_b64 s[50:51], s[24:25], s[50:51]
	s_andn2_b64 exec, exec, s[50:51]
	s_cbranch_execz .LBB0_107
.LBB0_105:
	s_mov_b32 s97, s73
	s_mov_b32 s98, s74
	s_mov_b32 s99, s75
	v_mov_b32_e32 v2, s62
	v_mov_b32_e32 v4, s63
	v_mov_b32_e32 v6, s72
	buffer_load_dwordx2 v[2:3], v2, s[96:99], 0 offen sc1
	s_nop 0
	buffer_load_dwordx2 v[4:5], v4, s[96:99], 0 offen sc1
	s_nop 0
	buffer_load_dwordx2 v[6:7], v6, s[96:99], 0 offen sc1
	v_mov_b32_e32 v8, s82
	v_mov_b32_e32 v14, s86
	v_mov_b32_e32 v16, s87
	v_mov_b32_e32 v9, s83
	buffer_load_dwordx2 v[10:11], v8, s[96:99], 0 offen sc1
	buffer_load_dwordx2 v[12:13], v9, s[96:99], 0 offen sc1
	s_nop 0
	buffer_load_dwordx2 v[14:15], v14, s[96:99], 0 offen sc1
	s_nop 0
	buffer_load_dwordx2 v[16:17], v16, s[96:99], 0 offen sc1
	v_mov_b32_e32 v8, s59
	buffer_load_dwordx2 v[18:19], v8, s[96:99], 0 offen sc1
	s_nop 0
	buffer_load_dwordx2 v[8:9], v20, s[96:99], 0 offen sc1
	s_or_b64 s[54:55], s[54:55], exec
	s_waitcnt vmcnt(8)
	v_cmp_ne_u32_e32 vcc, s33, v3
	s_waitcnt vmcnt(7)
	v_cmp_ne_u32_e64 s[24:25], s33, v5
	s_waitcnt vmcnt(6)
	v_cmp_ne_u32_e64 s[26:27], s33, v7
	s_or_b64 s[24:25], vcc, s[24:25]
	s_waitcnt vmcnt(5)
	v_cmp_ne_u32_e64 s[28:29], s33, v11
	s_or_b64 s[24:25], s[24:25], s[26:27]
	s_waitcnt vmcnt(4)
	v_cmp_ne_u32_e64 s[30:31], s33, v13
	s_or_b64 s[24:25], s[24:25], s[28:29]
	s_waitcnt vmcnt(3)
	v_cmp_ne_u32_e64 s[34:35], s33, v15
	s_or_b64 s[24:25], s[24:25], s[30:31]
	s_waitcnt vmcnt(2)
	v_cmp_ne_u32_e64 s[36:37], s33, v17
	s_or_b64 s[24:25], s[24:25], s[34:35]
	s_waitcnt vmcnt(1)
	v_cmp_ne_u32_e64 s[38:39], s33, v19
	s_or_b64 s[24:25], s[24:25], s[36:37]
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e64 s[40:41], s33, v9
	s_or_b64 s[24:25], s[24:25], s[38:39]
	s_or_b64 s[26:27], s[24:25], s[40:41]
	s_and_saveexec_b64 s[24:25], s[26:27]
	s_cbranch_execz .LBB0_104
	s_andn2_b64 s[54:55], s[54:55], exec
	s_sleep 1
	s_branch .LBB0_104
.LBB0_107:
	s_or_b64 exec, exec, s[50:51]
	v_add_f32_e32 v2, 0, v2
	v_add_f32_e32 v2, v2, v4
	v_add_f32_e32 v2, v2, v6
	v_add_f32_e32 v2, v2, v10
	v_add_f32_e32 v2, v2, v12
	v_add_f32_e32 v2, v2, v14
	v_add_f32_e32 v2, v2, v16
	v_add_f32_e32 v9, v2, v18
	v_pk_mul_f32 v[2:3], v[8:9], s[42:43]
	ds_read_b32 v4, v37 offset:2320
	v_exp_f32_e32 v2, v2
	v_add_f32_e32 v3, 0x3727c5ac, v3
	v_rsq_f32_e32 v3, v3
	s_mov_b32 s95, s79
	v_add_f32_e32 v2, 1.0, v2
	v_div_scale_f32 v5, s[24:25], v2, v2, 1.0
	v_rcp_f32_e32 v6, v5
	s_waitcnt lgkmcnt(0)
	v_mul_f32_e32 v3, v3, v4
	v_mul_f32_e32 v1, v3, v1
	v_div_scale_f32 v4, vcc, 1.0, v2, 1.0
	v_fma_f32 v3, -v5, v6, 1.0
	v_fmac_f32_e32 v6, v3, v6
	v_mul_f32_e32 v3, v4, v6
	v_fma_f32 v7, -v5, v3, v4
	v_fmac_f32_e32 v3, v7, v6
	v_fma_f32 v4, -v5, v3, v4
	v_div_fmas_f32 v3, v4, v6, v3
	v_div_fixup_f32 v2, v3, v2, 1.0
	s_mul_i32 s24, s69, 0x600
	v_mul_f32_e32 v1, v2, v1
	s_add_i32 s24, s24, s94
	v_cvt_pk_bf16_f32 v1, v1, s0
	v_add_lshl_u32 v2, s24, v27, 1
	s_mov_b32 s94, s78
	buffer_store_short v1, v2, s[92:95], 0 offen
.LBB0_108:
	s_or_b64 exec, exec, s[46:47]
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[24:25], s[22:23]
	s_cbranch_execz .LBB0_55
	s_memrealtime s[26:27]
	s_lshl_b32 s28, s58, 3
	v_mov_b32_e32 v1, s28
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[2:3], s[26:27]
	ds_write_b64 v1, v[2:3] offset:176
	s_memrealtime s[26:27]
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[2:3], s[26:27]
	ds_write_b64 v45, v[2:3] offset:88
	s_branch .LBB0_55
.LBB0_110:
	s_and_saveexec_b64 s[0:1], s[22:23]
	s_cbranch_execz .LBB0_112
	s_memrealtime s[6:7]
	v_mov_b32_e32 v2, s2
	v_mov_b32_e32 v3, s3
	v_mov_b32_e32 v4, s64
	v_mov_b32_e32 v5, 0
	ds_write_b128 v5, v[2:5] offset:128
	v_mov_b32_e32 v4, 0x6b310001
	v_mov_b32_e32 v6, 0x10001
	v_mov_b32_e32 v7, 8
	ds_write_b128 v5, v[4:7] offset:96
	v_mov_b32_e32 v4, 0x40000
	s_waitcnt lgkmcnt(0)
	v_mov_b32_e32 v6, s6
	v_mov_b32_e32 v7, s7
	ds_write_b128 v5, v[4:7] offset:112
.LBB0_112:
	s_or_b64 exec, exec, s[0:1]
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execz .LBB0_114
	v_lshlrev_b32_e32 v1, 3, v0
	ds_read_b64 v[2:3], v1
	s_mul_i32 s0, s2, 23
	s_and_b32 s5, s71, 0xffff
	s_mov_b32 s7, 0x27000
	s_mov_b32 s6, -1
	s_mov_b32 s4, s70
	v_add_lshl_u32 v0, s0, v0, 3
	s_waitcnt lgkmcnt(0)
	buffer_store_dwordx2 v[2:3], v0, s[4:7], 0 offen
.LBB0_114:
	s_endpgm
.LBB0_115:
	s_movk_i32 s6, 0x90
	v_cmp_gt_u32_e32 vcc, s6, v0
	s_and_saveexec_b64 s[18:19], vcc
	s_cbranch_execz .LBB0_121
	v_min_u32_e32 v17, 0x8f, v0
	v_mul_lo_u16_e32 v2, 57, v17
	v_lshrrev_b16_e32 v2, 10, v2
	v_mul_lo_u16_e32 v3, 7, v2
	v_mul_lo_u16_e32 v2, 18, v2
	v_add3_u32 v3, s2, 6, v3
	v_sub_u16_e32 v2, v17, v2
	v_mul_lo_u32 v3, v3, 18
	v_and_b32_e32 v2, 0xff, v2
	v_add_lshl_u32 v18, v3, v2, 3
	v_add_u32_e32 v19, 0xfffffca0, v18
	v_add_u32_e32 v22, 0xfffffd30, v18
	v_add_u32_e32 v23, 0xfffffdc0, v18
	v_add_u32_e32 v24, 0xfffffe50, v18
	v_add_u32_e32 v25, 0xfffffee0, v18
	v_add_u32_e32 v26, 0xffffff70, v18
	s_mov_b64 s[20:21], 0
	s_mov_b32 s72, s66
	;;#ASMSTART
	; kda-sim: poll gate PART
	;;#ASMEND
	s_branch .LBB0_118
	.p2align	5
.LBB0_117:
	s_or_b64 exec, exec, s[6:7]
	s_and_b64 s[6:7], exec, s[26:27]
	s_or_b64 s[20:21], s[6:7], s[20:21]
	s_andn2_b64 exec, exec, s[20:21]
	s_cbranch_execz .LBB0_120
.LBB0_118:
	buffer_load_dwordx2 v[2:3], v19, s[72:75], 0 offen sc1
	buffer_load_dwordx2 v[4:5], v22, s[72:75], 0 offen sc1
	buffer_load_dwordx2 v[6:7], v23, s[72:75], 0 offen sc1
	buffer_load_dwordx2 v[8:9], v24, s[72:75], 0 offen sc1
	buffer_load_dwordx2 v[10:11], v25, s[72:75], 0 offen sc1
	buffer_load_dwordx2 v[12:13], v26, s[72:75], 0 offen sc1
	buffer_load_dwordx2 v[14:15], v18, s[72:75], 0 offen sc1
	s_or_b64 s[26:27], s[26:27], exec
	s_waitcnt vmcnt(6)
	v_cmp_ne_u32_e32 vcc, s33, v3
	s_waitcnt vmcnt(5)
	v_cmp_ne_u32_e64 s[6:7], s33, v5
	s_waitcnt vmcnt(4)
	v_cmp_ne_u32_e64 s[8:9], s33, v7
	s_or_b64 s[6:7], vcc, s[6:7]
	s_waitcnt vmcnt(3)
	v_cmp_ne_u32_e64 s[10:11], s33, v9
	s_or_b64 s[6:7], s[6:7], s[8:9]
	s_waitcnt vmcnt(2)
	v_cmp_ne_u32_e64 s[12:13], s33, v11
	s_or_b64 s[6:7], s[6:7], s[10:11]
	s_waitcnt vmcnt(1)
	v_cmp_ne_u32_e64 s[14:15], s33, v13
	s_or_b64 s[6:7], s[6:7], s[12:13]
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e64 s[16:17], s33, v15
	s_or_b64 s[6:7], s[6:7], s[14:15]
	s_or_b64 s[8:9], s[6:7], s[16:17]
	s_and_saveexec_b64 s[6:7], s[8:9]
	s_cbranch_execz .LBB0_117
	s_andn2_b64 s[26:27], s[26:27], exec
	s_sleep 1
	s_branch .LBB0_117
.LBB0_120:
	s_or_b64 exec, exec, s[20:21]
	v_add_f32_e32 v2, 0, v2
	v_add_f32_e32 v2, v2, v4
	v_add_f32_e32 v2, v2, v6
	v_add_f32_e32 v2, v2, v8
	v_add_f32_e32 v2, v2, v10
	v_add_f32_e32 v2, v2, v12
	v_add_f32_e32 v2, v2, v14
	v_lshlrev_b32_e32 v3, 2, v17
	ds_write_b32 v3, v2 offset:192
.LBB0_121:
	s_or_b64 exec, exec, s[18:19]
	v_min_i32_e32 v2, 8, v1
	v_lshlrev_b32_e32 v3, 3, v2
	s_waitcnt lgkmcnt(0)
	s_barrier
	ds_read2_b64 v[4:7], v3 offset0:24 offset1:33
	ds_read2_b64 v[8:11], v3 offset0:42 offset1:51
	ds_read2_b64 v[12:15], v3 offset0:60 offset1:69
	v_cmp_gt_u32_e32 vcc, 9, v1
	s_cmp_eq_u32 s28, 0
	s_waitcnt lgkmcnt(2)
	v_pk_add_f32 v[18:19], v[4:5], v[6:7]
	ds_read2_b64 v[4:7], v3 offset0:78 offset1:87
	s_waitcnt lgkmcnt(2)
	v_pk_add_f32 v[8:9], v[18:19], v[8:9]
	s_nop 0
	v_pk_add_f32 v[8:9], v[8:9], v[10:11]
	s_waitcnt lgkmcnt(1)
	v_pk_add_f32 v[8:9], v[8:9], v[12:13]
	s_nop 0
	v_pk_add_f32 v[8:9], v[8:9], v[14:15]
	s_waitcnt lgkmcnt(0)
	v_pk_add_f32 v[4:5], v[8:9], v[4:5]
	s_nop 0
	v_pk_add_f32 v[4:5], v[4:5], v[6:7]
	s_nop 0
	v_mul_f32_e32 v3, 0x39124925, v4
	v_add_f32_e32 v3, 0x3727c5ac, v3
	v_rsq_f32_e32 v3, v3
	v_mov_b32_e32 v4, 0xff61b1e6
	v_mul_f32_e32 v3, v5, v3
	v_mul_f32_e32 v3, 0x3fb8aa3b, v3
	v_cndmask_b32_e32 v3, v4, v3, vcc
	v_mov_b32_e32 v4, v3
	v_mov_b32_e32 v5, v3
	s_nop 1
	v_permlane32_swap_b32_e32 v4, v5
	v_cmp_eq_u32_e64 s[6:7], v4, v3
	s_nop 1
	v_cndmask_b32_e64 v4, v4, v5, s[6:7]
	v_cmp_lt_f32_e64 s[6:7], v3, v4
	s_nop 1
	v_cndmask_b32_e64 v4, v3, v4, s[6:7]
	v_mov_b32_e32 v5, v4
	v_mov_b32_e32 v6, v4
	s_nop 1
	v_permlane16_swap_b32_e32 v5, v6
	v_cmp_eq_u32_e64 s[6:7], v5, v4
	s_nop 1
	v_cndmask_b32_e64 v5, v5, v6, s[6:7]
	v_cmp_lt_f32_e64 s[6:7], v4, v5
	s_nop 1
	v_cndmask_b32_e64 v4, v4, v5, s[6:7]
	ds_swizzle_b32 v5, v4 offset:swizzle(SWAP,8)
	s_waitcnt lgkmcnt(0)
	v_cmp_lt_f32_e64 s[6:7], v4, v5
	s_nop 1
	v_cndmask_b32_e64 v4, v4, v5, s[6:7]
	ds_swizzle_b32 v5, v4 offset:swizzle(SWAP,4)
	s_waitcnt lgkmcnt(0)
	v_cmp_lt_f32_e64 s[6:7], v4, v5
	s_nop 1
	v_cndmask_b32_e64 v4, v4, v5, s[6:7]
	ds_swizzle_b32 v5, v4 offset:swizzle(SWAP,2)
	s_waitcnt lgkmcnt(0)
	v_cmp_lt_f32_e64 s[6:7], v4, v5
	s_nop 1
	v_cndmask_b32_e64 v4, v4, v5, s[6:7]
	ds_swizzle_b32 v5, v4 offset:swizzle(SWAP,1)
	s_waitcnt lgkmcnt(0)
	v_cmp_lt_f32_e64 s[6:7], v4, v5
	s_nop 1
	v_cndmask_b32_e64 v4, v4, v5, s[6:7]
	v_sub_f32_e32 v3, v3, v4
	v_exp_f32_e32 v3, v3
	s_nop 0
	v_cndmask_b32_e32 v4, 0, v3, vcc
	v_mov_b32_e32 v3, v4
	v_mov_b32_e32 v5, v4
	s_nop 1
	v_permlane32_swap_b32_e32 v3, v5
	v_cmp_eq_u32_e64 s[6:7], v3, v4
	s_nop 1
	v_cndmask_b32_e64 v3, v3, v5, s[6:7]
	v_add_f32_e32 v3, v4, v3
	v_mov_b32_e32 v5, v3
	v_mov_b32_e32 v6, v3
	s_nop 1
	v_permlane16_swap_b32_e32 v5, v6
	v_cmp_eq_u32_e64 s[6:7], v5, v3
	s_nop 1
	v_cndmask_b32_e64 v5, v5, v6, s[6:7]
	v_add_f32_e32 v3, v3, v5
	ds_swizzle_b32 v5, v3 offset:swizzle(SWAP,8)
	s_cselect_b64 s[6:7], -1, 0
	s_and_b64 s[8:9], s[6:7], vcc
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v3, v3, v5
	ds_swizzle_b32 v5, v3 offset:swizzle(SWAP,4)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v3, v3, v5
	ds_swizzle_b32 v5, v3 offset:swizzle(SWAP,2)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v3, v3, v5
	ds_swizzle_b32 v6, v3 offset:swizzle(SWAP,1)
	s_and_saveexec_b64 s[6:7], s[8:9]
	s_cbranch_execz .LBB0_123
	v_mad_u64_u32 v[8:9], s[8:9], s2, 10, v[2:3]
	v_mov_b32_e32 v2, 0x1000
	v_lshl_add_u32 v2, v8, 3, v2
	v_mov_b32_e32 v5, s33
	s_mov_b32 s72, s66
	buffer_store_dwordx2 v[4:5], v2, s[72:75], 0 offen offset:3968 sc1
.LBB0_123:
	s_or_b64 exec, exec, s[6:7]
	v_or_b32_e32 v2, s28, v1
	v_cmp_eq_u32_e32 vcc, 0, v2
	s_and_saveexec_b64 s[6:7], vcc
	s_cbranch_execz .LBB0_125
	s_mul_i32 s8, s2, 0x50
	s_addk_i32 s8, 0x1000
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v2, v3, v6
	v_mov_b32_e32 v3, s33
	s_mov_b32 s72, s66
	v_mov_b32_e32 v4, s8
	buffer_store_dwordx2 v[2:3], v4, s[72:75], 0 offen offset:4040 sc1
.LBB0_125:
	s_or_b64 exec, exec, s[6:7]
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[6:7], s[22:23]
	s_cbranch_execnz .LBB0_13
	s_branch .LBB0_14
.Lfunc_end0:
	.size	k1_kda_pre_R1_L1_nb8_k0_tl, .Lfunc_end0-k1_kda_pre_R1_L1_nb8_k0_tl
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel k1_kda_pre_R1_L1_nb8_k0_tl
		.amdhsa_group_segment_fixed_size 22736
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 188
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_dispatch_ptr 0
		.amdhsa_user_sgpr_queue_ptr 0
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_user_sgpr_dispatch_id 0
		.amdhsa_user_sgpr_kernarg_preload_length 0
		.amdhsa_user_sgpr_kernarg_preload_offset 0
		.amdhsa_user_sgpr_private_segment_size 0
		.amdhsa_uses_dynamic_stack 0
		.amdhsa_enable_private_segment 0
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 0
		.amdhsa_system_sgpr_workgroup_id_z 0
		.amdhsa_system_sgpr_workgroup_info 0
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 136
		.amdhsa_next_free_sgpr 100
		.amdhsa_accum_offset 136
		.amdhsa_reserve_vcc 1
		.amdhsa_float_round_mode_32 0
		.amdhsa_float_round_mode_16_64 0
		.amdhsa_float_denorm_mode_32 3
		.amdhsa_float_denorm_mode_16_64 3
		.amdhsa_dx10_clamp 1
		.amdhsa_ieee_mode 1
		.amdhsa_fp16_overflow 0
		.amdhsa_tg_split 0
		.amdhsa_exception_fp_ieee_invalid_op 0
		.amdhsa_exception_fp_denorm_src 0
		.amdhsa_exception_fp_ieee_div_zero 0
		.amdhsa_exception_fp_ieee_overflow 0
		.amdhsa_exception_fp_ieee_underflow 0
		.amdhsa_exception_fp_ieee_inexact 0
		.amdhsa_exception_int_div_zero 0
	.end_amdhsa_kernel
	.text

	.set .Lk1_kda_pre_R1_L1_nb8_k0_tl.num_vgpr, 136
	.set .Lk1_kda_pre_R1_L1_nb8_k0_tl.num_agpr, 0
	.set .Lk1_kda_pre_R1_L1_nb8_k0_tl.numbered_sgpr, 100
	.set .Lk1_kda_pre_R1_L1_nb8_k0_tl.num_named_barrier, 0
	.set .Lk1_kda_pre_R1_L1_nb8_k0_tl.private_seg_size, 0
	.set .Lk1_kda_pre_R1_L1_nb8_k0_tl.uses_vcc, 1
	.set .Lk1_kda_pre_R1_L1_nb8_k0_tl.uses_flat_scratch, 0
	.set .Lk1_kda_pre_R1_L1_nb8_k0_tl.has_dyn_sized_stack, 0
	.set .Lk1_kda_pre_R1_L1_nb8_k0_tl.has_recursion, 0
	.set .Lk1_kda_pre_R1_L1_nb8_k0_tl.has_indirect_call, 0
	.p2alignl 6, 3212836864
	.fill 256, 4, 3212836864
	.section	.AMDGPU.gpr_maximums,"",@progbits
	.set amdgpu.max_num_vgpr, 0
	.set amdgpu.max_num_agpr, 0
	.set amdgpu.max_num_sgpr, 0
	.set amdgpu.max_num_named_barrier, 0
	.text
	.section	".note.GNU-stack","",@progbits
	.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     0
    .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         16
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         24
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         32
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         40
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         48
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         56
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         64
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         72
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         80
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         88
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         96
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         104
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         112
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         120
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         128
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         136
        .size:           8
        .value_kind:     global_buffer
      - .offset:         144
        .size:           4
        .value_kind:     by_value
      - .address_space:  global
        .offset:         152
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         160
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         168
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         176
        .size:           8
        .value_kind:     global_buffer
      - .offset:         184
        .size:           4
        .value_kind:     by_value
    .group_segment_fixed_size: 22736
    .kernarg_segment_align: 8
    .kernarg_segment_size: 188
    .max_flat_workgroup_size: 512
    .name:           k1_kda_pre_R1_L1_nb8_k0_tl
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 512
      - 1
      - 1
    .sgpr_count:     106
    .sgpr_spill_count: 0
    .symbol:         k1_kda_pre_R1_L1_nb8_k0_tl.kd
    .uniform_work_group_size: 1
    .uses_dynamic_stack: false
    .vgpr_count:     136
    .vgpr_spill_count: 0
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa-unknown-gfx950
amdhsa.version:
  - 1
  - 2
...

	.end_amdgpu_metadata
