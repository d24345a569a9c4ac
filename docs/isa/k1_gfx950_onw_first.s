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
	v_cmp_gt_u32_e64 s[24:25], 23, v0
	s_waitcnt lgkmcnt(0)
	s_and_b32 s5, s69, 0xffff
	s_mov_b32 s4, s68
	buffer_load_dword v1, off, s[4:7], 0
	s_waitcnt vmcnt(0)
	v_readfirstlane_b32 s8, v1
	s_and_saveexec_b64 s[4:5], s[24:25]
	v_lshlrev_b32_e32 v1, 3, v0
	v_mov_b64_e32 v[2:3], 0
	ds_write_b64 v1, v[2:3] offset:24592
	s_or_b64 exec, exec, s[4:5]
	v_cmp_eq_u32_e64 s[4:5], 0, v0
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[6:7], s[4:5]
	s_cbranch_execz .LBB0_4
	s_memrealtime s[10:11]
	v_mov_b32_e32 v1, 0
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[2:3], s[10:11]
	ds_write_b64 v1, v[2:3] offset:24592
.LBB0_4:
	s_or_b64 exec, exec, s[6:7]
	s_load_dwordx16 s[36:51], s[0:1], 0x0
	s_load_dwordx16 s[52:67], s[0:1], 0x40
	s_load_dword s6, s[0:1], 0x90
	s_ashr_i32 s0, s8, 31
	s_lshr_b32 s0, s0, 10
	s_add_i32 s0, s8, s0
	s_and_b32 s0, s0, 0xc00000
	s_sub_i32 s0, s8, s0
	s_lshl_b32 s0, s0, 8
	s_waitcnt lgkmcnt(0)
	s_add_i32 s33, s6, s0
	s_ashr_i32 s3, s2, 31
	s_and_b32 s17, s65, 0xffff
	s_and_b32 s73, s67, 0xffff
	s_add_i32 s33, s33, 1
	v_lshrrev_b32_e32 v1, 6, v0
	s_mov_b32 s75, 0x27000
	s_mov_b32 s74, -1
	v_and_b32_e32 v21, 63, v0
	v_readfirstlane_b32 s34, v1
	s_cmp_gt_i32 s2, 55
	v_and_b32_e32 v20, 31, v0
	s_cbranch_scc1 .LBB0_33
	v_min_u32_e32 v6, 0x11f, v0
	v_lshrrev_b32_e32 v8, 5, v6
	v_lshlrev_b32_e32 v6, 2, v6
	s_lshl_b32 s0, s2, 7
	v_and_b32_e32 v6, 0x7c, v6
	v_or_b32_e32 v9, s0, v6
	v_min_u32_e32 v6, 7, v8
	v_lshlrev_b32_e32 v16, 2, v0
	v_mul_u32_u24_e32 v6, 0x1c00, v6
	s_and_b32 s21, s37, 0xffff
	s_mov_b32 s20, s36
	s_mov_b32 s22, s74
	s_mov_b32 s23, s75
	s_and_b32 s29, s39, 0xffff
	s_mov_b32 s28, s38
	s_mov_b32 s30, s74
	s_mov_b32 s31, s75
	v_and_b32_e32 v1, 0x7c, v16
	v_add_lshl_u32 v6, v6, v9, 1
	v_lshlrev_b32_e32 v9, 1, v9
	v_or_b32_e32 v1, s0, v1
	buffer_load_dwordx2 v[6:7], v6, s[28:31], 0 offen
	s_and_b32 s9, s41, 0xffff
	buffer_load_dwordx2 v[10:11], v9, s[20:23], 0 offen
	s_mov_b32 s8, s40
	s_mov_b32 s10, s74
	s_mov_b32 s11, s75
	v_lshlrev_b32_e32 v1, 1, v1
	s_and_b32 s13, s43, 0xffff
	s_mov_b32 s12, s42
	s_mov_b32 s14, s74
	s_mov_b32 s15, s75
	buffer_load_dwordx2 v[2:3], v1, s[8:11], 0 offen
	buffer_load_dwordx2 v[4:5], v1, s[12:15], 0 offen
	v_cmp_eq_u32_e32 vcc, 8, v8
	s_movk_i32 s0, 0x120
	s_waitcnt vmcnt(1)
	v_and_b32_e32 v13, 0xffff0000, v3
	v_cndmask_b32_e32 v10, v6, v10, vcc
	v_lshlrev_b32_e32 v12, 16, v3
	v_and_b32_e32 v3, 0xffff0000, v2
	v_lshlrev_b32_e32 v2, 16, v2
	v_cndmask_b32_e32 v9, v7, v11, vcc
	v_and_b32_e32 v11, 0xffff0000, v10
	v_lshlrev_b32_e32 v10, 16, v10
	s_waitcnt vmcnt(0)
	v_and_b32_e32 v15, 0xffff0000, v5
	v_lshlrev_b32_e32 v14, 16, v5
	v_and_b32_e32 v5, 0xffff0000, v4
	v_lshlrev_b32_e32 v4, 16, v4
	v_and_b32_e32 v7, 0xffff0000, v9
	v_lshlrev_b32_e32 v6, 16, v9
	v_pk_mul_f32 v[2:3], v[2:3], v[10:11]
	v_pk_mul_f32 v[18:19], v[6:7], v[6:7]
	v_pk_mul_f32 v[22:23], v[10:11], v[10:11]
	v_pk_mul_f32 v[6:7], v[12:13], v[6:7]
	v_pk_mul_f32 v[2:3], v[2:3], v[4:5]
	v_pk_mul_f32 v[6:7], v[6:7], v[14:15]
	v_mov_b32_e32 v5, v22
	v_mov_b32_e32 v4, v2
	v_mov_b32_e32 v22, v3
	v_mov_b32_e32 v11, v18
	v_mov_b32_e32 v10, v6
	v_pk_add_f32 v[2:3], v[4:5], v[22:23]
	v_mov_b32_e32 v18, v7
	v_pk_add_f32 v[2:3], v[10:11], v[2:3]
	s_nop 0
	v_pk_add_f32 v[2:3], v[18:19], v[2:3]
	s_nop 0
	v_mov_b32_e32 v4, v3
	v_mov_b32_e32 v5, v3
	s_nop 1
	v_permlane16_swap_b32_e32 v4, v5
	v_cmp_eq_u32_e32 vcc, v4, v3
	v_mov_b32_e32 v7, v2
	s_nop 0
	v_cndmask_b32_e32 v4, v4, v5, vcc
	v_add_f32_e32 v3, v3, v4
	ds_swizzle_b32 v4, v3 offset:swizzle(SWAP,8)
	v_mov_b32_e32 v5, v2
	s_nop 1
	v_permlane16_swap_b32_e32 v5, v7
	v_cmp_eq_u32_e32 vcc, v5, v2
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v3, v3, v4
	ds_swizzle_b32 v4, v3 offset:swizzle(SWAP,4)
	v_cndmask_b32_e32 v7, v5, v7, vcc
	v_mov_b32_e32 v5, v2
	v_cmp_gt_u32_e32 vcc, s0, v0
	v_cmp_eq_u32_e64 s[0:1], 0, v20
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v4, v3, v4
	ds_swizzle_b32 v6, v4 offset:swizzle(SWAP,2)
	s_and_b64 s[6:7], vcc, s[0:1]
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
	s_and_saveexec_b64 s[0:1], s[6:7]
	s_cbranch_execz .LBB0_7
	v_mov_b32_e32 v7, v2
	s_waitcnt lgkmcnt(0)
	v_pk_add_f32 v[4:5], v[6:7], v[4:5]
	s_mul_i32 s6, s2, 0x90
	v_mov_b32_e32 v3, s33
	v_mov_b32_e32 v2, v5
	v_lshl_add_u32 v6, v8, 4, s6
	s_mov_b32 s72, s66
	v_mov_b32_e32 v5, s33
	buffer_store_dwordx4 v[2:5], v6, s[72:75], 0 offen sc0 sc1
.LBB0_7:
	s_or_b64 exec, exec, s[0:1]
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execz .LBB0_9
	s_memrealtime s[6:7]
	v_mov_b32_e32 v2, 0
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[4:5], s[6:7]
	ds_write_b64 v2, v[4:5] offset:24600
.LBB0_9:
	s_or_b64 exec, exec, s[0:1]
	s_cmp_gt_i32 s2, 0
	s_cbranch_scc0 .LBB0_109
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execz .LBB0_12
.LBB0_11:
	s_memrealtime s[6:7]
	v_mov_b32_e32 v2, 0
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[4:5], s[6:7]
	ds_write_b64 v2, v[4:5] offset:24608
.LBB0_12:
	s_or_b64 exec, exec, s[0:1]
	v_cmp_gt_u32_e32 vcc, 10, v0
	s_and_saveexec_b64 s[0:1], vcc
	s_cbranch_execz .LBB0_18
	v_lshlrev_b32_e32 v4, 3, v0
	v_or_b32_e32 v2, 0x1000, v4
	s_mov_b32 s72, s66
	;;#ASMSTART
	; kda-sim: poll mix WGT
	;;#ASMEND
	buffer_load_dwordx2 v[2:3], v2, s[72:75], 0 offen offset:3968 sc0 sc1
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e32 vcc, s33, v3
	s_and_saveexec_b64 s[6:7], vcc
	s_cbranch_execz .LBB0_17
	v_or_b32_e32 v4, 0x1f80, v4
	s_mov_b64 s[8:9], 0
	s_mov_b32 s72, s66
.LBB0_15:
	s_sleep 1
	buffer_load_dwordx2 v[2:3], v4, s[72:75], 0 offen sc0 sc1
	s_waitcnt vmcnt(0)
	v_cmp_eq_u32_e32 vcc, s33, v3
	s_or_b64 s[8:9], vcc, s[8:9]
	s_andn2_b64 exec, exec, s[8:9]
	s_cbranch_execnz .LBB0_15
	s_or_b64 exec, exec, s[8:9]
.LBB0_17:
	s_or_b64 exec, exec, s[6:7]
	ds_write_b32 v16, v2 offset:14352
.LBB0_18:
	s_or_b64 exec, exec, s[0:1]
	s_mov_b32 s28, s38
	s_mov_b32 s30, s74
	s_mov_b32 s31, s75
	v_add_u32_e32 v3, 0x7000, v1
	s_waitcnt lgkmcnt(0)
	s_barrier
	buffer_load_dwordx2 v[10:11], v1, s[28:31], 0 offen
	v_add_u32_e32 v2, 0x3000, v1
	buffer_load_dwordx2 v[12:13], v3, s[28:31], 0 offen
	buffer_load_dwordx2 v[14:15], v2, s[28:31], 0 offen offset:2048
	v_add_u32_e32 v2, 0xa000, v1
	buffer_load_dwordx2 v[16:17], v2, s[28:31], 0 offen offset:2048
	v_add_u32_e32 v2, 0xe000, v1
	buffer_load_dwordx2 v[18:19], v2, s[28:31], 0 offen
	v_add_u32_e32 v2, 0x11000, v1
	buffer_load_dwordx2 v[22:23], v2, s[28:31], 0 offen offset:2048
	v_add_u32_e32 v2, 0x15000, v1
	buffer_load_dwordx2 v[24:25], v2, s[28:31], 0 offen
	v_add_u32_e32 v2, 0x18000, v1
	buffer_load_dwordx2 v[28:29], v2, s[28:31], 0 offen offset:2048
	s_mov_b32 s37, s21
	s_mov_b32 s38, s74
	s_mov_b32 s39, s75
	buffer_load_dwordx2 v[36:37], v1, s[36:39], 0 offen
	v_mov_b32_e32 v27, 0
	ds_read_b128 v[2:5], v27 offset:14352
	ds_read_b128 v[6:9], v27 offset:14368
	ds_read_b64 v[32:33], v27 offset:14384
	s_mov_b32 s0, 1.0
	v_mov_b32_e32 v31, 1.0
	v_mov_b32_e32 v39, v31
	v_mov_b32_e32 v41, s0
	s_waitcnt lgkmcnt(2)
	v_mov_b32_e32 v26, v2
	v_mov_b32_e32 v2, v3
	v_mov_b32_e32 v3, v4
	v_mov_b32_e32 v35, s0
	v_mov_b32_e32 v4, v5
	s_waitcnt vmcnt(8)
	v_and_b32_e32 v38, 0xffff0000, v10
	v_lshlrev_b32_e32 v34, 16, v10
	v_and_b32_e32 v30, 0xffff0000, v11
	v_lshlrev_b32_e32 v40, 16, v11
	s_waitcnt vmcnt(7)
	v_and_b32_e32 v11, 0xffff0000, v13
	s_waitcnt vmcnt(6)
	v_and_b32_e32 v10, 0xffff0000, v15
	v_lshlrev_b32_e32 v43, 16, v12
	v_lshlrev_b32_e32 v42, 16, v14
	v_and_b32_e32 v45, 0xffff0000, v12
	v_and_b32_e32 v44, 0xffff0000, v14
	v_lshlrev_b32_e32 v13, 16, v13
	v_lshlrev_b32_e32 v12, 16, v15
	v_pk_mul_f32 v[10:11], v[2:3], v[10:11]
	v_pk_mul_f32 v[30:31], v[26:27], v[30:31]
	v_pk_mul_f32 v[42:43], v[2:3], v[42:43]
	v_pk_mul_f32 v[44:45], v[2:3], v[44:45]
	v_pk_mul_f32 v[38:39], v[26:27], v[38:39]
	v_pk_mul_f32 v[2:3], v[2:3], v[12:13]
	v_pk_mul_f32 v[12:13], v[26:27], v[40:41]
	v_pk_mul_f32 v[34:35], v[26:27], v[34:35]
	v_add_f32_e32 v27, v38, v39
	v_add_f32_e32 v12, v12, v13
	v_add_f32_e32 v13, v30, v31
	s_waitcnt vmcnt(5)
	v_lshlrev_b32_e32 v15, 16, v17
	v_lshlrev_b32_e32 v14, 16, v16
	v_and_b32_e32 v17, 0xffff0000, v17
	v_and_b32_e32 v16, 0xffff0000, v16
	v_add_f32_e32 v26, v34, v35
	v_add_f32_e32 v27, v27, v44
	v_add_f32_e32 v13, v13, v10
	s_waitcnt vmcnt(4)
	v_lshlrev_b32_e32 v47, 16, v19
	v_lshlrev_b32_e32 v46, 16, v18
	v_and_b32_e32 v19, 0xffff0000, v19
	v_and_b32_e32 v18, 0xffff0000, v18
	v_pk_mul_f32 v[14:15], v[4:5], v[14:15] op_sel_hi:[0,1]
	v_pk_mul_f32 v[4:5], v[4:5], v[16:17] op_sel_hi:[0,1]
	v_add_f32_e32 v26, v26, v42
	v_add_f32_e32 v12, v12, v2
	v_add_f32_e32 v10, v27, v45
	v_add_f32_e32 v11, v13, v11
	s_waitcnt vmcnt(3)
	v_lshlrev_b32_e32 v49, 16, v23
	v_lshlrev_b32_e32 v48, 16, v22
	s_waitcnt lgkmcnt(1)
	v_pk_mul_f32 v[18:19], v[6:7], v[18:19] op_sel_hi:[0,1]
	v_add_f32_e32 v2, v26, v43
	v_add_f32_e32 v3, v12, v3
	v_pk_add_f32 v[4:5], v[10:11], v[4:5]
	v_and_b32_e32 v11, 0xffff0000, v23
	v_and_b32_e32 v10, 0xffff0000, v22
	v_pk_mul_f32 v[16:17], v[6:7], v[46:47] op_sel_hi:[0,1]
	v_pk_add_f32 v[2:3], v[2:3], v[14:15]
	v_pk_add_f32 v[4:5], v[4:5], v[18:19]
	v_pk_mul_f32 v[12:13], v[6:7], v[48:49] op_sel:[1,0]
	v_pk_mul_f32 v[6:7], v[6:7], v[10:11] op_sel:[1,0]
	v_pk_add_f32 v[2:3], v[2:3], v[16:17]
	v_pk_add_f32 v[4:5], v[4:5], v[6:7]
	s_waitcnt vmcnt(2)
	v_lshlrev_b32_e32 v7, 16, v25
	v_lshlrev_b32_e32 v6, 16, v24
	v_pk_add_f32 v[2:3], v[2:3], v[12:13]
	v_and_b32_e32 v11, 0xffff0000, v25
	v_and_b32_e32 v10, 0xffff0000, v24
	v_pk_mul_f32 v[6:7], v[8:9], v[6:7] op_sel_hi:[0,1]
	v_pk_add_f32 v[2:3], v[2:3], v[6:7]
	v_pk_mul_f32 v[6:7], v[8:9], v[10:11] op_sel_hi:[0,1]
	v_pk_add_f32 v[4:5], v[4:5], v[6:7]
	s_waitcnt vmcnt(1)
	v_lshlrev_b32_e32 v7, 16, v29
	v_lshlrev_b32_e32 v6, 16, v28
	v_mov_b32_e32 v8, v9
	v_and_b32_e32 v11, 0xffff0000, v29
	v_and_b32_e32 v10, 0xffff0000, v28
	v_pk_mul_f32 v[6:7], v[8:9], v[6:7] op_sel_hi:[0,1]
	v_pk_add_f32 v[2:3], v[2:3], v[6:7]
	v_pk_mul_f32 v[6:7], v[8:9], v[10:11] op_sel_hi:[0,1]
	v_pk_add_f32 v[4:5], v[4:5], v[6:7]
	s_waitcnt vmcnt(0)
	v_lshlrev_b32_e32 v7, 16, v37
	v_lshlrev_b32_e32 v6, 16, v36
	s_waitcnt lgkmcnt(0)
	v_pk_mul_f32 v[6:7], v[32:33], v[6:7] op_sel_hi:[0,1]
	v_pk_add_f32 v[2:3], v[2:3], v[6:7]
	v_and_b32_e32 v9, 0xffff0000, v37
	v_div_scale_f32 v10, s[0:1], v33, v33, v3
	v_rcp_f32_e32 v11, v10
	v_and_b32_e32 v8, 0xffff0000, v36
	v_pk_mul_f32 v[6:7], v[32:33], v[8:9] op_sel_hi:[0,1]
	v_pk_add_f32 v[4:5], v[4:5], v[6:7]
	v_fma_f32 v6, -v10, v11, 1.0
	v_fmac_f32_e32 v11, v6, v11
	v_div_scale_f32 v6, vcc, v3, v33, v3
	v_mul_f32_e32 v7, v6, v11
	v_fma_f32 v8, -v10, v7, v6
	v_fmac_f32_e32 v7, v8, v11
	v_div_scale_f32 v8, s[0:1], v33, v33, v2
	v_rcp_f32_e32 v9, v8
	v_fma_f32 v6, -v10, v7, v6
	v_div_fmas_f32 v6, v6, v11, v7
	v_div_fixup_f32 v3, v6, v33, v3
	v_fma_f32 v6, -v8, v9, 1.0
	v_fmac_f32_e32 v9, v6, v9
	v_div_scale_f32 v6, vcc, v2, v33, v2
	v_mul_f32_e32 v7, v6, v9
	v_fma_f32 v10, -v8, v7, v6
	v_fmac_f32_e32 v7, v10, v9
	v_fma_f32 v6, -v8, v7, v6
	v_div_scale_f32 v8, s[0:1], v33, v33, v5
	v_rcp_f32_e32 v10, v8
	v_div_fmas_f32 v6, v6, v9, v7
	v_div_fixup_f32 v2, v6, v33, v2
	v_fma_f32 v6, -v8, v10, 1.0
	v_fmac_f32_e32 v10, v6, v10
	v_div_scale_f32 v6, vcc, v5, v33, v5
	v_mul_f32_e32 v7, v6, v10
	v_fma_f32 v9, -v8, v7, v6
	v_fmac_f32_e32 v7, v9, v10
	v_fma_f32 v6, -v8, v7, v6
	v_div_scale_f32 v8, s[0:1], v33, v33, v4
	v_rcp_f32_e32 v9, v8
	v_div_fmas_f32 v6, v6, v10, v7
	v_div_fixup_f32 v5, v6, v33, v5
	v_fma_f32 v6, -v8, v9, 1.0
	v_fmac_f32_e32 v9, v6, v9
	v_div_scale_f32 v6, vcc, v4, v33, v4
	v_mul_f32_e32 v7, v6, v9
	v_fma_f32 v10, -v8, v7, v6
	v_fmac_f32_e32 v7, v10, v9
	v_fma_f32 v6, -v8, v7, v6
	v_div_fmas_f32 v6, v6, v9, v7
	v_div_fixup_f32 v4, v6, v33, v4
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
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execz .LBB0_20
	s_lshl3_add_u32 s6, s2, 0x1000
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v6, v6, v7
	v_mov_b32_e32 v7, s33
	s_mov_b32 s72, s66
	v_mov_b32_e32 v8, s6
	buffer_store_dwordx2 v[6:7], v8, s[72:75], 0 offen offset:4048 sc0 sc1
.LBB0_20:
	s_or_b64 exec, exec, s[0:1]
	v_cmp_gt_u32_e32 vcc, 8, v0
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[18:19], vcc
	s_cbranch_execz .LBB0_26
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
	s_branch .LBB0_23
	.p2align	5
.LBB0_22:
	s_or_b64 exec, exec, s[0:1]
	s_and_b64 s[0:1], exec, s[22:23]
	s_or_b64 s[20:21], s[0:1], s[20:21]
	s_andn2_b64 exec, exec, s[20:21]
	s_cbranch_execz .LBB0_25
.LBB0_23:
	buffer_load_dwordx2 v[6:7], v23, s[72:75], 0 offen sc0 sc1
	buffer_load_dwordx2 v[8:9], v24, s[72:75], 0 offen sc0 sc1
	buffer_load_dwordx2 v[10:11], v25, s[72:75], 0 offen sc0 sc1
	buffer_load_dwordx2 v[12:13], v26, s[72:75], 0 offen sc0 sc1
	buffer_load_dwordx2 v[14:15], v27, s[72:75], 0 offen sc0 sc1
	buffer_load_dwordx2 v[16:17], v28, s[72:75], 0 offen sc0 sc1
	buffer_load_dwordx2 v[18:19], v29, s[72:75], 0 offen sc0 sc1
	s_or_b64 s[22:23], s[22:23], exec
	s_waitcnt vmcnt(6)
	v_cmp_ne_u32_e32 vcc, s33, v7
	s_waitcnt vmcnt(5)
	v_cmp_ne_u32_e64 s[0:1], s33, v9
	s_waitcnt vmcnt(4)
	v_cmp_ne_u32_e64 s[6:7], s33, v11
	s_or_b64 s[0:1], vcc, s[0:1]
	s_waitcnt vmcnt(3)
	v_cmp_ne_u32_e64 s[8:9], s33, v13
	s_or_b64 s[0:1], s[0:1], s[6:7]
	s_waitcnt vmcnt(2)
	v_cmp_ne_u32_e64 s[10:11], s33, v15
	s_or_b64 s[0:1], s[0:1], s[8:9]
	s_waitcnt vmcnt(1)
	v_cmp_ne_u32_e64 s[12:13], s33, v17
	s_or_b64 s[0:1], s[0:1], s[10:11]
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e64 s[14:15], s33, v19
	s_or_b64 s[0:1], s[0:1], s[12:13]
	s_or_b64 s[6:7], s[0:1], s[14:15]
	s_and_saveexec_b64 s[0:1], s[6:7]
	s_cbranch_execz .LBB0_22
	s_andn2_b64 s[22:23], s[22:23], exec
	s_sleep 1
	s_branch .LBB0_22
.LBB0_25:
	s_or_b64 exec, exec, s[20:21]
	v_add_f32_e32 v6, 0, v6
	v_add_f32_e32 v6, v6, v8
	v_add_f32_e32 v6, v6, v10
	v_add_f32_e32 v6, v6, v12
	v_add_f32_e32 v6, v6, v14
	v_add_f32_e32 v6, v6, v16
	v_add_f32_e32 v6, v6, v18
	v_lshlrev_b32_e32 v7, 2, v22
	ds_write_b32 v7, v6 offset:14864
.LBB0_26:
	s_or_b64 exec, exec, s[18:19]
	v_cmp_gt_u32_e32 vcc, 32, v0
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[0:1], vcc
	s_cbranch_execz .LBB0_28
	s_and_b32 s9, s45, 0xffff
	s_mov_b32 s11, 0x27000
	s_mov_b32 s10, -1
	s_mov_b32 s8, s44
	buffer_load_dwordx2 v[14:15], v1, s[8:11], 0 offen
	v_mov_b32_e32 v10, 0
	ds_read_b128 v[6:9], v10 offset:14864
	ds_read_b128 v[10:13], v10 offset:14880
	s_mov_b32 s6, 0xffff0000
	s_mov_b32 s16, s64
	s_mov_b32 s18, s74
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
	v_add_f32_e32 v6, 0x358637bd, v6
	v_rsq_f32_e32 v6, v6
	s_mov_b32 s19, s75
	v_pk_mul_f32 v[2:3], v[2:3], v[6:7] op_sel_hi:[1,0]
	v_pk_mul_f32 v[4:5], v[4:5], v[6:7] op_sel_hi:[1,0]
	s_waitcnt vmcnt(0)
	v_lshlrev_b32_e32 v7, 16, v15
	v_lshlrev_b32_e32 v6, 16, v14
	v_and_b32_e32 v9, 0xffff0000, v15
	v_and_b32_e32 v8, 0xffff0000, v14
	v_pk_mul_f32 v[2:3], v[2:3], v[6:7]
	v_pk_mul_f32 v[4:5], v[4:5], v[8:9]
	v_lshrrev_b32_e32 v3, 16, v3
	v_lshrrev_b32_e32 v2, 16, v2
	v_and_or_b32 v3, v5, s6, v3
	v_and_or_b32 v2, v4, s6, v2
	buffer_store_dwordx2 v[2:3], v1, s[16:19], 0 offen sc0 sc1
.LBB0_28:
	s_or_b64 exec, exec, s[0:1]
	s_waitcnt vmcnt(0)
	s_barrier
	;;#ASMSTART
	; kda-sim: publish mix XRDY
	;;#ASMEND
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execz .LBB0_30
	s_lshl3_add_u32 s6, s2, 0x2000
	v_mov_b32_e32 v2, 1
	v_mov_b32_e32 v3, s33
	s_mov_b32 s72, s66
	v_mov_b32_e32 v1, s6
	buffer_store_dwordx2 v[2:3], v1, s[72:75], 0 offen offset:400 sc0 sc1
.LBB0_30:
	s_or_b64 exec, exec, s[0:1]
	s_barrier
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execz .LBB0_32
	s_memrealtime s[6:7]
	v_mov_b32_e32 v1, 0
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[2:3], s[6:7]
	ds_write_b64 v1, v[2:3] offset:24616
.LBB0_32:
	s_or_b64 exec, exec, s[0:1]
.LBB0_33:
	s_sub_i32 s12, s2, 56
	s_cmpk_gt_u32 s12, 0xc4
	v_and_b32_e32 v1, 15, v0
	s_cbranch_scc1 .LBB0_51
	v_lshrrev_b32_e32 v3, 1, v0
	v_lshl_or_b32 v2, s12, 5, v1
	v_and_b32_e32 v3, 24, v3
	s_movk_i32 s0, 0x1c00
	v_lshl_or_b32 v7, s34, 7, v3
	v_mul_lo_u32 v5, v2, s0
	v_or_b32_e32 v2, v5, v7
	s_mov_b32 s11, 0x27000
	s_mov_b32 s10, -1
	s_and_b32 s9, s47, 0xffff
	s_mov_b32 s8, s46
	v_lshlrev_b32_e32 v2, 1, v2
	v_or_b32_e32 v8, 0x400, v7
	buffer_load_dwordx4 v[118:121], v2, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[122:125], v2, s[8:11], 0 offen offset:64 nt
	buffer_load_dwordx4 v[12:15], v2, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[114:117], v2, s[8:11], 0 offen offset:192 nt
	v_add_lshl_u32 v2, v5, v8, 1
	v_or_b32_e32 v9, 0x800, v7
	buffer_load_dwordx4 v[110:113], v2, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[94:97], v2, s[8:11], 0 offen offset:64 nt
	buffer_load_dwordx4 v[98:101], v2, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[86:89], v2, s[8:11], 0 offen offset:192 nt
	v_add_lshl_u32 v2, v5, v9, 1
	v_or_b32_e32 v10, 0xc00, v7
	buffer_load_dwordx4 v[102:105], v2, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[106:109], v2, s[8:11], 0 offen offset:64 nt
	buffer_load_dwordx4 v[90:93], v2, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[16:19], v2, s[8:11], 0 offen offset:192 nt
	v_add_lshl_u32 v2, v5, v10, 1
	v_or_b32_e32 v4, 0x1000, v7
	buffer_load_dwordx4 v[82:85], v2, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[78:81], v2, s[8:11], 0 offen offset:64 nt
	buffer_load_dwordx4 v[74:77], v2, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[66:69], v2, s[8:11], 0 offen offset:192 nt
	v_add_lshl_u32 v2, v5, v4, 1
	v_or_b32_e32 v3, 0x1400, v7
	buffer_load_dwordx4 v[70:73], v2, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[62:65], v2, s[8:11], 0 offen offset:64 nt
	buffer_load_dwordx4 v[58:61], v2, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[50:53], v2, s[8:11], 0 offen offset:192 nt
	v_add_lshl_u32 v2, v5, v3, 1
	buffer_load_dwordx4 v[54:57], v2, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[46:49], v2, s[8:11], 0 offen offset:64 nt
	buffer_load_dwordx4 v[42:45], v2, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[38:41], v2, s[8:11], 0 offen offset:192 nt
	v_or_b32_e32 v2, 0x1800, v7
	v_add_lshl_u32 v5, v5, v2, 1
	buffer_load_dwordx4 v[34:37], v5, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[30:33], v5, s[8:11], 0 offen offset:64 nt
	buffer_load_dwordx4 v[26:29], v5, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[22:25], v5, s[8:11], 0 offen offset:192 nt
	v_cmp_gt_u32_e32 vcc, 56, v0
	s_and_saveexec_b64 s[0:1], vcc
	s_cbranch_execz .LBB0_38
	v_lshlrev_b32_e32 v5, 3, v0
	v_or_b32_e32 v6, 0x2000, v5
	s_mov_b32 s72, s66
	;;#ASMSTART
	; kda-sim: poll load_x XRDY
	;;#ASMEND
	buffer_load_dword v6, v6, s[72:75], 0 offen offset:404 sc0 sc1
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e32 vcc, s33, v6
	s_and_b64 exec, exec, vcc
	s_cbranch_execz .LBB0_38
	v_add_u32_e32 v5, 0x2194, v5
	s_mov_b64 s[6:7], 0
	s_mov_b32 s72, s66
.LBB0_37:
	s_sleep 1
	buffer_load_dword v6, v5, s[72:75], 0 offen sc0 sc1
	s_waitcnt vmcnt(0)
	v_cmp_eq_u32_e32 vcc, s33, v6
	s_or_b64 s[6:7], vcc, s[6:7]
	s_andn2_b64 exec, exec, s[6:7]
	s_cbranch_execnz .LBB0_37
.LBB0_38:
	s_or_b64 exec, exec, s[0:1]
	v_lshlrev_b32_e32 v5, 4, v0
	s_mov_b32 s16, s64
	s_mov_b32 s18, s74
	s_mov_b32 s19, s75
	s_waitcnt lgkmcnt(0)
	s_barrier
	buffer_load_dwordx4 v[126:129], v5, s[16:19], 0 offen sc0 sc1
	v_or_b32_e32 v6, 0x200, v0
	s_movk_i32 s0, 0x380
	v_cmp_gt_u32_e32 vcc, s0, v6
	s_waitcnt vmcnt(0)
	ds_write_b128 v5, v[126:129]
	s_and_saveexec_b64 s[0:1], vcc
	s_cbranch_execz .LBB0_40
	v_lshlrev_b32_e32 v6, 4, v6
	buffer_load_dwordx4 v[126:129], v6, s[16:19], 0 offen sc0 sc1
	s_waitcnt vmcnt(0)
	ds_write_b128 v5, v[126:129] offset:8192
.LBB0_40:
	s_or_b64 exec, exec, s[0:1]
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execz .LBB0_42
	s_memrealtime s[6:7]
	v_mov_b32_e32 v6, 0
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[126:127], s[6:7]
	ds_write_b64 v6, v[126:127] offset:24624
.LBB0_42:
	s_or_b64 exec, exec, s[0:1]
	v_lshlrev_b32_e32 v6, 1, v7
	ds_read_b128 v[126:129], v6
	ds_read_b128 v[130:133], v6 offset:64
	v_lshlrev_b32_e32 v11, 1, v2
	s_lshl_b32 s6, s12, 1
	s_or_b32 s6, s6, 1
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[118:121], v[118:121], v[126:129], 0
	s_min_u32 s0, s6, 0x188
	s_mov_b32 s8, s46
	v_cmp_gt_u32_e32 vcc, 16, v0
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[118:121], v[122:125], v[130:133], v[118:121]
	ds_read_b128 v[122:125], v6 offset:128
	ds_read_b128 v[126:129], v6 offset:192
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[118:121], v[12:15], v[122:125], v[118:121]
	v_lshlrev_b32_e32 v13, 1, v8
	v_lshlrev_b32_e32 v14, 1, v9
	ds_read_b128 v[122:125], v14
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[114:117], v[114:117], v[126:129], v[118:121]
	v_lshlrev_b32_e32 v15, 1, v10
	v_lshlrev_b32_e32 v12, 1, v3
	s_nop 0
	ds_read_b128 v[118:121], v13
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[110:113], v[110:113], v[118:121], v[114:117]
	s_nop 2
	ds_read_b128 v[114:117], v6 offset:2112
	ds_read_b128 v[118:121], v6 offset:2176
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[94:97], v[94:97], v[114:117], v[110:113]
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[94:97], v[98:101], v[118:121], v[94:97]
	ds_read_b128 v[98:101], v6 offset:2240
	ds_read_b128 v[110:113], v6 offset:4160
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[86:89], v[86:89], v[98:101], v[94:97]
	s_nop 3
	ds_read_b128 v[94:97], v6 offset:4224
	ds_read_b128 v[98:101], v6 offset:4288
	v_mfma_f32_16x16x32_bf16 v[86:89], v[102:105], v[122:125], v[86:89]
	s_waitcnt lgkmcnt(2)
	v_mfma_f32_16x16x32_bf16 v[86:89], v[106:109], v[110:113], v[86:89]
	ds_read_b128 v[106:109], v6 offset:12416
	s_waitcnt lgkmcnt(2)
	v_mfma_f32_16x16x32_bf16 v[86:89], v[90:93], v[94:97], v[86:89]
	ds_read_b128 v[90:93], v15
	s_waitcnt lgkmcnt(2)
	v_mfma_f32_16x16x32_bf16 v[86:89], v[16:19], v[98:101], v[86:89]
	v_lshlrev_b32_e32 v16, 1, v4
	ds_read_b128 v[94:97], v16
	v_lshl_or_b32 v17, s0, 4, v1
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[82:85], v[82:85], v[90:93], v[86:89]
	s_nop 2
	ds_read_b128 v[86:89], v6 offset:6208
	ds_read_b128 v[90:93], v6 offset:6272
	v_mul_u32_u24_e32 v17, 0x1c00, v17
	v_or_b32_e32 v7, v17, v7
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[78:81], v[78:81], v[86:89], v[82:85]
	v_add_lshl_u32 v8, v17, v8, 1
	v_add_lshl_u32 v9, v17, v9, 1
	v_add_lshl_u32 v10, v17, v10, 1
	ds_read_b128 v[82:85], v6 offset:6336
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[74:77], v[74:77], v[90:93], v[78:81]
	v_lshlrev_b32_e32 v7, 1, v7
	s_movk_i32 s0, 0x3810
	s_nop 0
	ds_read_b128 v[78:81], v6 offset:8256
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[66:69], v[66:69], v[82:85], v[74:77]
	s_nop 2
	ds_read_b128 v[74:77], v6 offset:8320
	ds_read_b128 v[82:85], v6 offset:8384
	v_mfma_f32_16x16x32_bf16 v[66:69], v[70:73], v[94:97], v[66:69]
	ds_read_b128 v[70:73], v6 offset:10304
	ds_read_b128 v[86:89], v6 offset:10368
	ds_read_b128 v[90:93], v12
	ds_read_b128 v[98:101], v11
	ds_read_b128 v[94:97], v6 offset:10432
	ds_read_b128 v[102:105], v6 offset:12352
	s_waitcnt lgkmcnt(8)
	v_mfma_f32_16x16x32_bf16 v[62:65], v[62:65], v[78:81], v[66:69]
	s_waitcnt lgkmcnt(7)
	v_mfma_f32_16x16x32_bf16 v[58:61], v[58:61], v[74:77], v[62:65]
	s_waitcnt lgkmcnt(6)
	v_mfma_f32_16x16x32_bf16 v[50:53], v[50:53], v[82:85], v[58:61]
	buffer_load_dwordx4 v[82:85], v8, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[74:77], v8, s[8:11], 0 offen offset:64 nt
	s_waitcnt lgkmcnt(3)
	v_mfma_f32_16x16x32_bf16 v[50:53], v[54:57], v[90:93], v[50:53]
	v_mfma_f32_16x16x32_bf16 v[46:49], v[46:49], v[70:73], v[50:53]
	buffer_load_dwordx4 v[78:81], v8, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[62:65], v8, s[8:11], 0 offen offset:192 nt
	buffer_load_dwordx4 v[66:69], v9, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[70:73], v9, s[8:11], 0 offen offset:64 nt
	v_lshlrev_b32_e32 v8, 6, v0
	v_and_b32_e32 v8, 0x300, v8
	v_mfma_f32_16x16x32_bf16 v[46:49], v[42:45], v[86:89], v[46:49]
	buffer_load_dwordx4 v[54:57], v9, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[58:61], v9, s[8:11], 0 offen offset:192 nt
	buffer_load_dwordx4 v[50:53], v10, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[42:45], v10, s[8:11], 0 offen offset:64 nt
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[86:89], v[38:41], v[94:97], v[46:49]
	s_nop 2
	buffer_load_dwordx4 v[46:49], v10, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[38:41], v10, s[8:11], 0 offen offset:192 nt
	buffer_load_dwordx4 v[90:93], v7, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[94:97], v7, s[8:11], 0 offen offset:64 nt
	v_mfma_f32_16x16x32_bf16 v[98:101], v[34:37], v[98:101], v[86:89]
	buffer_load_dwordx4 v[34:37], v7, s[8:11], 0 offen offset:128 nt
	s_nop 1
	buffer_load_dwordx4 v[86:89], v7, s[8:11], 0 offen offset:192 nt
	v_and_b32_e32 v7, 3, v0
	v_lshlrev_b32_e32 v7, 2, v7
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[30:33], v[30:33], v[102:105], v[98:101]
	v_or3_b32 v7, v8, v7, s0
	s_nop 1
	ds_read_b128 v[98:101], v6 offset:12480
	v_mfma_f32_16x16x32_bf16 v[26:29], v[26:29], v[106:109], v[30:33]
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[22:25], v[98:101], v[26:29]
	s_nop 7
	ds_write_b128 v5, v[22:25] offset:14352
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[0:1], vcc
	s_cbranch_execz .LBB0_44
	ds_read2st64_b32 v[8:9], v7 offset1:4
	ds_read2st64_b32 v[18:19], v7 offset0:8 offset1:12
	ds_read2st64_b32 v[22:23], v7 offset0:16 offset1:20
	ds_read2st64_b32 v[24:25], v7 offset0:24 offset1:28
	s_lshl_b32 s7, s12, 8
	s_waitcnt lgkmcnt(3)
	v_add_f32_e32 v8, 0, v8
	v_add_f32_e32 v8, v8, v9
	s_waitcnt lgkmcnt(2)
	v_add_f32_e32 v8, v8, v18
	v_add_f32_e32 v8, v8, v19
	s_waitcnt lgkmcnt(1)
	v_add_f32_e32 v8, v8, v22
	v_add_f32_e32 v8, v8, v23
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v8, v8, v24
	v_add_f32_e32 v8, v8, v25
	s_addk_i32 s7, 0x2350
	v_mov_b32_e32 v27, s33
	v_and_b32_e32 v26, 0xffff0000, v8
	v_lshl_add_u32 v8, v0, 3, s7
	s_mov_b32 s72, s66
	buffer_store_dwordx2 v[26:27], v8, s[72:75], 0 offen sc0 sc1
.LBB0_44:
	s_or_b64 exec, exec, s[0:1]
	s_barrier
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execz .LBB0_46
	s_memrealtime s[12:13]
	v_mov_b32_e32 v8, 0
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[18:19], s[12:13]
	ds_write_b64 v8, v[18:19] offset:24632
.LBB0_46:
	s_or_b64 exec, exec, s[0:1]
	ds_read_b128 v[22:25], v6
	ds_read_b128 v[26:29], v6 offset:64
	v_add_lshl_u32 v4, v17, v4, 1
	s_mov_b32 s8, s46
	v_add_lshl_u32 v3, v17, v3, 1
	s_waitcnt vmcnt(3) lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[90:93], v[22:25], 0
	v_add_lshl_u32 v2, v17, v2, 1
	s_cmpk_lt_u32 s6, 0x189
	s_cselect_b64 s[0:1], -1, 0
	s_waitcnt vmcnt(2) lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[94:97], v[26:29], v[22:25]
	ds_read_b128 v[26:29], v6 offset:128
	ds_read_b128 v[30:33], v6 offset:192
	s_waitcnt vmcnt(1) lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[34:37], v[26:29], v[22:25]
	s_waitcnt vmcnt(0) lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[86:89], v[30:33], v[22:25]
	ds_read_b128 v[26:29], v13
	ds_read_b128 v[30:33], v14
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[82:85], v[26:29], v[22:25]
	ds_read_b128 v[26:29], v6 offset:2112
	ds_read_b128 v[34:37], v6 offset:2176
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[74:77], v[26:29], v[22:25]
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[78:81], v[34:37], v[22:25]
	ds_read_b128 v[26:29], v6 offset:2240
	ds_read_b128 v[34:37], v6 offset:4160
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[62:65], v[26:29], v[22:25]
	v_mfma_f32_16x16x32_bf16 v[22:25], v[66:69], v[30:33], v[22:25]
	ds_read_b128 v[26:29], v6 offset:4224
	ds_read_b128 v[30:33], v6 offset:4288
	s_waitcnt lgkmcnt(2)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[70:73], v[34:37], v[22:25]
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[54:57], v[26:29], v[22:25]
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[58:61], v[30:33], v[22:25]
	ds_read_b128 v[26:29], v15
	ds_read_b128 v[30:33], v6 offset:6208
	ds_read_b128 v[34:37], v16
	ds_read_b128 v[16:19], v6 offset:10368
	s_waitcnt lgkmcnt(3)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[50:53], v[26:29], v[22:25]
	ds_read_b128 v[26:29], v6 offset:6272
	s_waitcnt lgkmcnt(3)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[42:45], v[30:33], v[22:25]
	buffer_load_dwordx4 v[30:33], v4, s[8:11], 0 offen nt
	ds_read_b128 v[42:45], v6 offset:6336
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[46:49], v[26:29], v[22:25]
	buffer_load_dwordx4 v[26:29], v4, s[8:11], 0 offen offset:64 nt
	ds_read_b128 v[46:49], v6 offset:8256
	s_waitcnt lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[38:41], v[42:45], v[22:25]
	buffer_load_dwordx4 v[38:41], v4, s[8:11], 0 offen offset:128 nt
	ds_read_b128 v[42:45], v6 offset:8384
	s_waitcnt vmcnt(2)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[30:33], v[34:37], v[22:25]
	buffer_load_dwordx4 v[30:33], v4, s[8:11], 0 offen offset:192 nt
	ds_read_b128 v[34:37], v6 offset:8320
	s_waitcnt vmcnt(2) lgkmcnt(2)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[26:29], v[46:49], v[22:25]
	buffer_load_dwordx4 v[26:29], v3, s[8:11], 0 offen nt
	s_waitcnt vmcnt(2) lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[22:25], v[38:41], v[34:37], v[22:25]
	buffer_load_dwordx4 v[34:37], v3, s[8:11], 0 offen offset:64 nt
	ds_read_b128 v[38:41], v12
	s_waitcnt vmcnt(2)
	v_mfma_f32_16x16x32_bf16 v[12:15], v[30:33], v[42:45], v[22:25]
	ds_read_b128 v[30:33], v6 offset:10304
	ds_read_b128 v[42:45], v11
	s_nop 1
	buffer_load_dwordx4 v[22:25], v3, s[8:11], 0 offen offset:128 nt
	s_waitcnt vmcnt(2) lgkmcnt(2)
	v_mfma_f32_16x16x32_bf16 v[8:11], v[26:29], v[38:41], v[12:15]
	s_nop 2
	buffer_load_dwordx4 v[12:15], v3, s[8:11], 0 offen offset:192 nt
	s_waitcnt vmcnt(2) lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[8:11], v[34:37], v[30:33], v[8:11]
	buffer_load_dwordx4 v[26:29], v2, s[8:11], 0 offen nt
	buffer_load_dwordx4 v[30:33], v2, s[8:11], 0 offen offset:64 nt
	s_waitcnt vmcnt(3)
	v_mfma_f32_16x16x32_bf16 v[8:11], v[22:25], v[16:19], v[8:11]
	ds_read_b128 v[16:19], v6 offset:10432
	ds_read_b128 v[22:25], v6 offset:12352
	s_waitcnt vmcnt(2) lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[8:11], v[12:15], v[16:19], v[8:11]
	buffer_load_dwordx4 v[12:15], v2, s[8:11], 0 offen offset:128 nt
	buffer_load_dwordx4 v[16:19], v2, s[8:11], 0 offen offset:192 nt
	s_and_b64 s[8:9], vcc, s[0:1]
	s_waitcnt vmcnt(3)
	v_mfma_f32_16x16x32_bf16 v[8:11], v[26:29], v[42:45], v[8:11]
	s_waitcnt vmcnt(2) lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[8:11], v[30:33], v[22:25], v[8:11]
	ds_read_b128 v[22:25], v6 offset:12416
	ds_read_b128 v[26:29], v6 offset:12480
	s_waitcnt vmcnt(1) lgkmcnt(1)
	v_mfma_f32_16x16x32_bf16 v[8:11], v[12:15], v[22:25], v[8:11]
	s_waitcnt vmcnt(0) lgkmcnt(0)
	v_mfma_f32_16x16x32_bf16 v[8:11], v[16:19], v[26:29], v[8:11]
	s_nop 7
	ds_write_b128 v5, v[8:11] offset:14352
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[0:1], s[8:9]
	s_cbranch_execz .LBB0_48
	ds_read2st64_b32 v[2:3], v7 offset1:4
	ds_read2st64_b32 v[4:5], v7 offset0:8 offset1:12
	ds_read2st64_b32 v[8:9], v7 offset0:16 offset1:20
	ds_read2st64_b32 v[6:7], v7 offset0:24 offset1:28
	s_lshl_b32 s6, s6, 7
	s_waitcnt lgkmcnt(3)
	v_add_f32_e32 v2, 0, v2
	v_add_f32_e32 v2, v2, v3
	s_waitcnt lgkmcnt(2)
	v_add_f32_e32 v2, v2, v4
	v_add_f32_e32 v2, v2, v5
	s_waitcnt lgkmcnt(1)
	v_add_f32_e32 v2, v2, v8
	v_add_f32_e32 v2, v2, v9
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v2, v2, v6
	v_add_f32_e32 v2, v2, v7
	s_addk_i32 s6, 0x2350
	v_mov_b32_e32 v11, s33
	v_and_b32_e32 v10, 0xffff0000, v2
	v_lshl_add_u32 v2, v0, 3, s6
	s_mov_b32 s72, s66
	buffer_store_dwordx2 v[10:11], v2, s[72:75], 0 offen sc0 sc1
.LBB0_48:
	s_or_b64 exec, exec, s[0:1]
	s_barrier
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execz .LBB0_50
	s_memrealtime s[6:7]
	v_mov_b32_e32 v2, 0
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[4:5], s[6:7]
	ds_write_b64 v2, v[4:5] offset:24640
.LBB0_50:
	s_or_b64 exec, exec, s[0:1]
.LBB0_51:
	s_add_i32 s1, s2, 0x100
	s_ashr_i32 s6, s1, 31
	s_lshr_b32 s6, s6, 24
	s_add_i32 s6, s1, s6
	s_and_b32 s6, s6, 0xffffff00
	s_sub_i32 s65, s1, s6
	s_sub_i32 s1, 0x15f, s65
	s_movk_i32 s0, 0x100
	s_lshr_b32 s64, s1, 8
	s_mov_b32 s67, 0
	s_cbranch_scc0 .LBB0_104
	v_min_i32_e32 v4, 47, v0
	v_lshrrev_b32_e32 v5, 4, v4
	s_movk_i32 s1, 0x5f0
	v_min_i32_e32 v6, 0x17f, v0
	v_mad_u32_u24 v31, v5, s1, v4
	v_and_b32_e32 v7, 0x7f, v6
	s_movk_i32 s1, 0x80
	v_or_b32_e32 v30, 0x1800, v7
	v_subrev_co_u32_e64 v7, s[12:13], s1, v0
	v_mov_b32_e32 v2, 0x5810
	v_lshlrev_b32_e32 v4, 4, v0
	v_lshlrev_b32_e32 v38, 7, v5
	v_cmp_eq_u32_e64 s[10:11], 2, v5
	v_lshlrev_b32_e32 v5, 2, v1
	v_add_u32_e32 v41, 0xffffff80, v6
	v_cmp_gt_u32_e64 s[14:15], s0, v7
	s_min_i32 s0, s34, 1
	s_and_b32 s49, s49, 0xffff
	s_and_b32 s45, s51, 0xffff
	s_and_b32 s53, s53, 0xffff
	s_and_b32 s77, s55, 0xffff
	s_and_b32 s57, s57, 0xffff
	s_and_b32 s81, s59, 0xffff
	s_and_b32 s61, s61, 0xffff
	s_and_b32 s85, s63, 0xffff
	v_lshl_add_u32 v3, v21, 2, v2
	v_lshrrev_b32_e32 v34, 5, v0
	v_and_b32_e32 v35, 0x1f0, v4
	v_lshlrev_b32_e32 v4, 1, v0
	v_lshl_add_u32 v43, v41, 2, v2
	v_lshl_or_b32 v2, s34, 6, v5
	s_lshl_b32 s0, s0, 9
	v_and_b32_e32 v4, 0x60, v4
	v_mov_b32_e32 v8, 0x5c10
	v_add_u32_e32 v45, 0x5e10, v2
	s_cmp_eq_u32 s34, 0
	v_lshlrev_b32_e32 v2, 2, v34
	s_mov_b32 s47, 0x27000
	s_mov_b32 s46, -1
	s_mov_b32 s44, s50
	s_mov_b32 s76, s54
	s_mov_b32 s80, s58
	s_mov_b32 s84, s62
	v_lshl_or_b32 v36, s34, 4, v1
	v_lshlrev_b32_e32 v37, 1, v4
	v_cmp_gt_u32_e64 s[6:7], 48, v0
	v_cmp_gt_u32_e64 s[8:9], 32, v0
	v_add_u32_e32 v39, 0x60d0, v5
	v_lshrrev_b32_e32 v40, 7, v6
	v_lshl_add_u32 v42, v6, 2, v8
	v_lshl_or_b32 v44, v4, 2, v8
	v_cmp_gt_u32_e64 s[16:17], 16, v21
	s_cselect_b64 s[18:19], -1, 0
	v_add_u32_e32 v46, 0x5810, v35
	v_add_u32_e32 v47, 0x5e10, v35
	v_add_u32_e32 v48, 0x60d0, v2
	v_cmp_eq_u32_e64 s[20:21], 0, v20
	v_add_u32_e32 v49, 0x6110, v2
	v_cmp_gt_u32_e64 s[22:23], 16, v0
	v_add_u32_e32 v50, 0x6110, v5
	v_mov_b32_e32 v51, 0
	s_movk_i32 s68, 0x1890
	s_mov_b32 s42, 0xbfb8aa3b
	s_brev_b32 s43, 60
	v_mov_b32_e32 v52, 0xe000
	s_mov_b32 s88, s66
	v_add_u32_e32 v53, s0, v3
	v_mov_b32_e32 v54, 0x2350
	s_branch .LBB0_54
.LBB0_53:
	s_or_b64 exec, exec, s[0:1]
	s_add_i32 s67, s67, 1
	s_cmp_lg_u32 s67, s64
	s_cbranch_scc0 .LBB0_104
.LBB0_54:
	s_lshl_b32 s0, s67, 8
	s_add_i32 s28, s0, s65
	s_mul_hi_i32 s0, s28, 0x2aaaaaab
	s_lshr_b32 s1, s0, 31
	s_ashr_i32 s0, s0, 4
	s_add_i32 s29, s0, s1
	s_mul_i32 s0, s29, 0x60
	s_cmp_lg_u32 s28, s0
	s_cselect_b64 s[0:1], -1, 0
	s_cmp_lt_i32 s28, 0
	s_cselect_b64 s[26:27], -1, 0
	s_and_b64 s[0:1], s[26:27], s[0:1]
	s_subb_u32 s37, s29, 0
	s_ashr_i32 s0, s28, 31
	s_lshr_b32 s0, s0, 29
	s_add_i32 s0, s28, s0
	s_ashr_i32 s29, s0, 3
	s_and_b32 s30, s0, -8
	s_cmp_lg_u32 s28, s30
	s_cselect_b64 s[0:1], -1, 0
	s_and_b64 s[0:1], s[26:27], s[0:1]
	s_subb_u32 s26, s29, 0
	s_mul_hi_i32 s26, s26, 0x2aaaaaab
	s_lshr_b32 s27, s26, 31
	s_lshr_b32 s26, s26, 1
	s_add_i32 s26, s26, s27
	s_mul_i32 s26, s26, 12
	s_cmp_lg_u64 s[0:1], 0
	s_subb_u32 s35, s29, s26
	s_sub_i32 s34, s28, s30
	s_lshl_b32 s30, s35, 7
	s_lshl_b32 s0, s34, 4
	s_add_i32 s1, s30, s0
	s_mul_i32 s31, s37, 12
	v_add_u32_e32 v25, s1, v31
	s_add_i32 s31, s31, s35
	v_lshlrev_b32_e32 v2, 4, v25
	s_mul_i32 s1, s37, 0x1200
	s_lshl_b32 s69, s31, 7
	v_or_b32_e32 v32, s30, v36
	buffer_load_dwordx4 v[26:29], v2, s[44:47], 0 offen
	v_add_u32_e32 v2, s1, v25
	s_add_i32 s69, s69, s0
	v_lshl_or_b32 v6, v32, 8, v37
	s_mov_b32 s50, s46
	s_mov_b32 s51, s47
	v_mul_lo_u32 v60, v2, 12
	v_or_b32_e32 v2, s69, v34
	buffer_load_dwordx4 v[18:21], v6, s[48:51], 0 offen
	buffer_load_dwordx4 v[14:17], v6, s[48:51], 0 offen offset:16
	buffer_load_dwordx4 v[10:13], v6, s[48:51], 0 offen offset:32
	s_nop 0
	buffer_load_dwordx4 v[6:9], v6, s[48:51], 0 offen offset:48
	s_lshl_b32 s1, s35, 2
	v_lshlrev_b32_e32 v32, 2, v32
	s_mov_b32 s58, s46
	s_mov_b32 s59, s47
	v_or_b32_e32 v56, s0, v1
	s_mov_b32 s54, s46
	s_mov_b32 s55, s47
	v_lshl_or_b32 v57, v2, 9, v35
	s_mov_b32 s62, s46
	s_mov_b32 s63, s47
	s_mov_b32 s78, s46
	s_mov_b32 s79, s47
	v_mov_b32_e32 v33, s1
	buffer_load_dword v59, v32, s[56:59], 0 offen
	v_lshlrev_b32_e32 v32, 2, v56
	s_mov_b32 s82, s46
	s_mov_b32 s83, s47
	buffer_load_dwordx3 v[22:24], v60, s[52:55], 0 offen
	buffer_load_dwordx4 v[2:5], v57, s[60:63], 0 offen
	buffer_load_dword v58, v33, s[76:79], 0 offen
	buffer_load_dword v55, v32, s[80:83], 0 offen
	s_mul_i32 s78, s67, 5
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execz .LBB0_56
	s_memrealtime s[26:27]
	s_lshl_b32 s28, s78, 3
	v_mov_b32_e32 v32, s28
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[62:63], s[26:27]
	ds_write_b64 v32, v[62:63] offset:24736
	s_memrealtime s[26:27]
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[32:33], s[26:27]
	ds_write_b64 v51, v[32:33] offset:24648
.LBB0_56:
	s_or_b64 exec, exec, s[0:1]
	s_mul_i32 s36, s37, 0x1890
	s_and_saveexec_b64 s[0:1], s[6:7]
	s_cbranch_execz .LBB0_65
	v_add_lshl_u32 v25, v25, s36, 3
	v_add_u32_e32 v32, 0x2000, v25
	s_mov_b32 s72, s66
	;;#ASMSTART
	; kda-sim: poll k.conv PROJ
	;;#ASMEND
	buffer_load_dwordx2 v[32:33], v32, s[72:75], 0 offen offset:848 sc0 sc1
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e32 vcc, s33, v33
	s_and_saveexec_b64 s[26:27], vcc
	s_cbranch_execz .LBB0_61
	v_add_u32_e32 v25, 0x2350, v25
	s_mov_b64 s[28:29], 0
.LBB0_59:
	s_mov_b32 s72, s66
	s_sleep 1
	buffer_load_dwordx2 v[32:33], v25, s[72:75], 0 offen sc0 sc1
	s_waitcnt vmcnt(0)
	v_cmp_eq_u32_e32 vcc, s33, v33
	s_or_b64 s[28:29], vcc, s[28:29]
	s_andn2_b64 exec, exec, s[28:29]
	s_cbranch_execnz .LBB0_59
	s_or_b64 exec, exec, s[28:29]
.LBB0_61:
	s_or_b64 exec, exec, s[26:27]
	v_pk_mul_f32 v[26:27], v[22:23], v[26:27]
	v_mov_b32_e32 v25, v32
	v_add_f32_e32 v22, 0, v26
	v_pk_mul_f32 v[28:29], v[24:25], v[28:29]
	v_add_f32_e32 v22, v22, v27
	v_add_f32_e32 v22, v22, v28
	v_add_f32_e32 v22, v22, v29
	v_mul_f32_e32 v25, 0xbfb8aa3b, v22
	v_exp_f32_e32 v25, v25
	s_mov_b32 s54, s46
	s_mov_b32 s55, s47
	v_add_u32_e32 v33, 4, v60
	v_add_f32_e32 v25, 1.0, v25
	v_div_scale_f32 v26, s[26:27], v25, v25, 1.0
	v_rcp_f32_e32 v27, v26
	v_div_scale_f32 v28, vcc, 1.0, v25, 1.0
	v_add_u32_e32 v61, 8, v60
	buffer_store_dword v23, v60, s[52:55], 0 offen
	buffer_store_dword v24, v33, s[52:55], 0 offen
	buffer_store_dword v32, v61, s[52:55], 0 offen
	v_fma_f32 v29, -v26, v27, 1.0
	v_fmac_f32_e32 v27, v29, v27
	v_mul_f32_e32 v29, v28, v27
	v_fma_f32 v62, -v26, v29, v28
	v_fmac_f32_e32 v29, v62, v27
	v_fma_f32 v26, -v26, v29, v28
	v_div_fmas_f32 v26, v26, v27, v29
	v_div_fixup_f32 v25, v26, v25, 1.0
	v_mul_f32_e32 v22, v22, v25
	s_and_saveexec_b64 s[26:27], s[8:9]
	s_cbranch_execz .LBB0_63
	v_lshl_or_b32 v23, s31, 8, v38
	v_add_u32_e32 v23, v23, v56
	v_lshl_add_u32 v24, v23, 3, v52
	v_mov_b32_e32 v23, s33
	s_mov_b32 s72, s66
	buffer_store_dwordx2 v[22:23], v24, s[72:75], 0 offen offset:2000 sc0 sc1
.LBB0_63:
	s_or_b64 exec, exec, s[26:27]
	s_and_b64 exec, exec, s[10:11]
	ds_write_b32 v39, v22
.LBB0_65:
	s_or_b64 exec, exec, s[0:1]
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execz .LBB0_67
	s_memrealtime s[26:27]
	s_lshl_b32 s28, s78, 3
	s_waitcnt vmcnt(3)
	v_mov_b32_e32 v22, s28
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[24:25], s[26:27]
	ds_write_b64 v22, v[24:25] offset:24744
	s_memrealtime s[26:27]
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[22:23], s[26:27]
	ds_write_b64 v51, v[22:23] offset:24656
.LBB0_67:
	s_or_b64 exec, exec, s[0:1]
	s_waitcnt vmcnt(3)
	v_add_u32_e32 v22, s37, v40
	v_mad_u64_u32 v[22:23], s[0:1], v22, s68, v[30:31]
	s_add_i32 s28, s36, 0x188f
	v_min_i32_e32 v22, s28, v22
	v_lshlrev_b32_e32 v24, 3, v22
	v_add_u32_e32 v22, 0x2000, v24
	s_mov_b32 s89, s73
	s_mov_b32 s90, s74
	s_mov_b32 s91, s75
	;;#ASMSTART
	; kda-sim: poll k.gates PROJ
	;;#ASMEND
	buffer_load_dwordx2 v[22:23], v22, s[88:91], 0 offen offset:848 sc0 sc1
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e32 vcc, s33, v23
	s_and_saveexec_b64 s[0:1], vcc
	s_cbranch_execz .LBB0_71
	v_add_u32_e32 v24, 0x2350, v24
	s_mov_b64 s[26:27], 0
.LBB0_69:
	s_mov_b32 s89, s73
	s_mov_b32 s90, s74
	s_mov_b32 s91, s75
	s_sleep 1
	buffer_load_dwordx2 v[22:23], v24, s[88:91], 0 offen sc0 sc1
	s_waitcnt vmcnt(0)
	v_cmp_eq_u32_e32 vcc, s33, v23
	s_or_b64 s[26:27], vcc, s[26:27]
	s_andn2_b64 exec, exec, s[26:27]
	s_cbranch_execnz .LBB0_69
	s_or_b64 exec, exec, s[26:27]
.LBB0_71:
	s_or_b64 exec, exec, s[0:1]
	s_lshl_b32 s0, s31, 8
	v_add_u32_e32 v23, s0, v41
	v_max_i32_e32 v23, s0, v23
	v_lshlrev_b32_e32 v23, 3, v23
	v_add_u32_e32 v24, 0xe000, v23
	s_mov_b32 s89, s73
	s_mov_b32 s90, s74
	s_mov_b32 s91, s75
	;;#ASMSTART
	; kda-sim: poll k.gates QK
	;;#ASMEND
	buffer_load_dwordx2 v[24:25], v24, s[88:91], 0 offen offset:2000 sc0 sc1
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e32 vcc, s33, v25
	s_and_saveexec_b64 s[0:1], vcc
	s_cbranch_execz .LBB0_75
	v_add_u32_e32 v23, 0xe7d0, v23
	s_mov_b64 s[26:27], 0
.LBB0_73:
	s_mov_b32 s89, s73
	s_mov_b32 s90, s74
	s_mov_b32 s91, s75
	s_sleep 1
	buffer_load_dwordx2 v[24:25], v23, s[88:91], 0 offen sc0 sc1
	s_waitcnt vmcnt(0)
	v_cmp_eq_u32_e32 vcc, s33, v25
	s_or_b64 s[26:27], vcc, s[26:27]
	s_andn2_b64 exec, exec, s[26:27]
	s_cbranch_execnz .LBB0_73
	s_or_b64 exec, exec, s[26:27]
.LBB0_75:
	s_or_b64 exec, exec, s[0:1]
	s_and_saveexec_b64 s[0:1], s[12:13]
	ds_write_b32 v42, v22
	s_or_b64 exec, exec, s[0:1]
	s_and_saveexec_b64 s[0:1], s[14:15]
	ds_write_b32 v43, v24
	s_or_b64 exec, exec, s[0:1]
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execz .LBB0_84
	s_add_i32 s35, s35, s36
	s_lshl_b32 s26, s35, 3
	s_add_i32 s27, s26, 0xe000
	s_mov_b32 s89, s73
	s_mov_b32 s90, s74
	s_mov_b32 s91, s75
	v_mov_b32_e32 v22, s27
	;;#ASMSTART
	; kda-sim: poll k.gates PROJ
	;;#ASMEND
	buffer_load_dwordx2 v[22:23], v22, s[88:91], 0 offen offset:1872 sc0 sc1
	s_waitcnt vmcnt(0)
	v_cmp_eq_u32_e32 vcc, s33, v23
	s_cbranch_vccnz .LBB0_83
	s_add_i32 s26, s26, 0xe750
.LBB0_82:
	s_mov_b32 s89, s73
	s_mov_b32 s90, s74
	s_mov_b32 s91, s75
	v_mov_b32_e32 v22, s26
	s_sleep 1
	buffer_load_dwordx2 v[22:23], v22, s[88:91], 0 offen sc0 sc1
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e32 vcc, s33, v23
	s_cbranch_vccnz .LBB0_82
.LBB0_83:
	v_mul_f32_e32 v22, 0xbfb8aa3b, v22
	v_exp_f32_e32 v22, v22
	s_nop 0
	v_add_f32_e32 v22, 1.0, v22
	v_div_scale_f32 v23, s[26:27], v22, v22, 1.0
	v_rcp_f32_e32 v24, v23
	v_div_scale_f32 v25, vcc, 1.0, v22, 1.0
	v_fma_f32 v26, -v23, v24, 1.0
	v_fmac_f32_e32 v24, v26, v24
	v_mul_f32_e32 v26, v25, v24
	v_fma_f32 v27, -v23, v26, v25
	v_fmac_f32_e32 v26, v27, v24
	v_fma_f32 v23, -v23, v26, v25
	v_div_fmas_f32 v23, v23, v24, v26
	v_div_fixup_f32 v22, v23, v22, 1.0
	ds_write_b32 v51, v22 offset:24912
.LBB0_84:
	s_or_b64 exec, exec, s[0:1]
	s_waitcnt lgkmcnt(0)
	s_barrier
	v_and_b32_e32 v67, 0xffff0000, v14
	v_lshlrev_b32_e32 v66, 16, v14
	v_and_b32_e32 v69, 0xffff0000, v15
	v_lshlrev_b32_e32 v68, 16, v15
	v_and_b32_e32 v71, 0xffff0000, v16
	v_lshlrev_b32_e32 v70, 16, v16
	v_and_b32_e32 v73, 0xffff0000, v17
	v_lshlrev_b32_e32 v72, 16, v17
	ds_read_b128 v[14:17], v44
	v_and_b32_e32 v33, 0xffff0000, v18
	v_lshlrev_b32_e32 v32, 16, v18
	v_and_b32_e32 v75, 0xffff0000, v10
	v_lshlrev_b32_e32 v74, 16, v10
	v_and_b32_e32 v77, 0xffff0000, v11
	v_lshlrev_b32_e32 v76, 16, v11
	s_waitcnt lgkmcnt(0)
	v_pk_mul_f32 v[10:11], v[14:15], v[32:33]
	v_and_b32_e32 v61, 0xffff0000, v19
	v_lshlrev_b32_e32 v60, 16, v19
	v_and_b32_e32 v63, 0xffff0000, v20
	v_lshlrev_b32_e32 v62, 16, v20
	v_and_b32_e32 v65, 0xffff0000, v21
	v_lshlrev_b32_e32 v64, 16, v21
	ds_read_b128 v[18:21], v44 offset:16
	ds_read_b128 v[22:25], v44 offset:32
	ds_read_b128 v[26:29], v44 offset:48
	v_add_f32_e32 v10, 0, v10
	v_add_f32_e32 v14, v10, v11
	v_pk_mul_f32 v[10:11], v[16:17], v[60:61]
	s_nop 0
	v_add_f32_e32 v10, v14, v10
	v_add_f32_e32 v14, v10, v11
	s_waitcnt lgkmcnt(2)
	v_pk_mul_f32 v[10:11], v[18:19], v[62:63]
	s_nop 0
	v_add_f32_e32 v10, v14, v10
	v_add_f32_e32 v14, v10, v11
	v_pk_mul_f32 v[10:11], v[20:21], v[64:65]
	s_nop 0
	v_add_f32_e32 v10, v14, v10
	v_add_f32_e32 v14, v10, v11
	s_waitcnt lgkmcnt(1)
	v_pk_mul_f32 v[10:11], v[22:23], v[66:67]
	v_and_b32_e32 v23, 0xffff0000, v7
	v_add_f32_e32 v10, v14, v10
	v_add_f32_e32 v14, v10, v11
	v_pk_mul_f32 v[10:11], v[24:25], v[68:69]
	v_and_b32_e32 v25, 0xffff0000, v13
	v_add_f32_e32 v10, v14, v10
	v_add_f32_e32 v14, v10, v11
	s_waitcnt lgkmcnt(0)
	v_pk_mul_f32 v[10:11], v[26:27], v[70:71]
	v_and_b32_e32 v27, 0xffff0000, v12
	v_add_f32_e32 v10, v14, v10
	ds_read_b128 v[14:17], v44 offset:64
	v_add_f32_e32 v18, v10, v11
	v_pk_mul_f32 v[10:11], v[28:29], v[72:73]
	v_lshlrev_b32_e32 v26, 16, v12
	v_add_f32_e32 v10, v18, v10
	v_add_f32_e32 v22, v10, v11
	ds_read_b128 v[18:21], v44 offset:80
	s_waitcnt lgkmcnt(1)
	v_pk_mul_f32 v[10:11], v[14:15], v[74:75]
	v_lshlrev_b32_e32 v24, 16, v13
	v_add_f32_e32 v10, v22, v10
	v_add_f32_e32 v14, v10, v11
	v_pk_mul_f32 v[10:11], v[16:17], v[76:77]
	s_waitcnt lgkmcnt(0)
	v_pk_mul_f32 v[18:19], v[18:19], v[26:27]
	v_add_f32_e32 v10, v14, v10
	ds_read_b128 v[14:17], v44 offset:96
	v_add_f32_e32 v28, v10, v11
	v_lshlrev_b32_e32 v22, 16, v7
	v_and_b32_e32 v7, 0xffff0000, v6
	v_lshlrev_b32_e32 v6, 16, v6
	v_add_f32_e32 v18, v28, v18
	ds_read_b128 v[10:13], v44 offset:112
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
	s_and_saveexec_b64 s[0:1], s[16:17]
	s_cbranch_execz .LBB0_86
	v_cmp_eq_u32_e32 vcc, v7, v6
	v_mul_f32_e32 v9, 0x3fb8aa3b, v58
	v_exp_f32_e32 v9, v9
	v_cndmask_b32_e32 v7, v7, v8, vcc
	v_add_f32_e32 v6, v6, v7
	v_add_f32_e32 v6, v6, v59
	v_mul_f32_e32 v6, 0xbfb8aa3b, v6
	v_exp_f32_e32 v6, v6
	s_nop 0
	v_add_f32_e32 v6, 1.0, v6
	v_div_scale_f32 v7, s[26:27], v6, v6, 1.0
	v_rcp_f32_e32 v8, v7
	v_div_scale_f32 v10, vcc, 1.0, v6, 1.0
	v_fma_f32 v11, -v7, v8, 1.0
	v_fmac_f32_e32 v8, v11, v8
	v_mul_f32_e32 v11, v10, v8
	v_fma_f32 v12, -v7, v11, v10
	v_fmac_f32_e32 v11, v12, v8
	v_fma_f32 v7, -v7, v11, v10
	v_div_fmas_f32 v7, v7, v8, v11
	v_div_fixup_f32 v6, v7, v6, 1.0
	v_mul_f32_e32 v6, v6, v9
	v_mul_f32_e32 v6, 0xbfb8aa3b, v6
	v_exp_f32_e32 v6, v6
	ds_write_b32 v45, v6
.LBB0_86:
	s_or_b64 exec, exec, s[0:1]
	ds_read2st64_b32 v[6:7], v53 offset1:1
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
	s_and_saveexec_b64 s[0:1], s[12:13]
	s_cbranch_execz .LBB0_88
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v8, v8, v9
	v_add_f32_e32 v8, 0x358637bd, v8
	v_rsq_f32_e32 v8, v8
	s_nop 0
	v_mul_f32_e32 v9, 0x3db504f3, v8
	v_cndmask_b32_e64 v8, v8, v9, s[18:19]
	v_mul_f32_e32 v6, v6, v8
	v_mul_f32_e32 v7, v7, v8
	ds_write2st64_b32 v53, v6, v7 offset1:1
.LBB0_88:
	s_or_b64 exec, exec, s[0:1]
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execz .LBB0_90
	s_memrealtime s[26:27]
	s_lshl_b32 s29, s78, 3
	v_mov_b32_e32 v6, s29
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[8:9], s[26:27]
	ds_write_b64 v6, v[8:9] offset:24752
	s_memrealtime s[26:27]
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[6:7], s[26:27]
	ds_write_b64 v51, v[6:7] offset:24664
.LBB0_90:
	s_or_b64 exec, exec, s[0:1]
	ds_read_b32 v18, v51 offset:24912
	ds_read_b128 v[6:9], v47
	ds_read_b128 v[10:13], v46 offset:512
	ds_read_b128 v[14:17], v46
	s_waitcnt lgkmcnt(2)
	v_pk_mul_f32 v[2:3], v[2:3], v[6:7]
	v_pk_mul_f32 v[4:5], v[4:5], v[8:9]
	s_waitcnt lgkmcnt(1)
	v_pk_mul_f32 v[8:9], v[10:11], v[2:3]
	v_pk_mul_f32 v[6:7], v[12:13], v[4:5]
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
	ds_swizzle_b32 v7, v6 offset:swizzle(SWAP,8)
	ds_read_b32 v8, v48
	s_waitcnt lgkmcnt(1)
	v_add_f32_e32 v6, v6, v7
	ds_swizzle_b32 v7, v6 offset:swizzle(SWAP,4)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v6, v6, v7
	ds_swizzle_b32 v7, v6 offset:swizzle(SWAP,2)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v6, v6, v7
	ds_swizzle_b32 v7, v6 offset:swizzle(SWAP,1)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v6, v6, v7
	v_sub_f32_e32 v6, v8, v6
	v_mul_f32_e32 v6, v18, v6
	v_pk_mul_f32 v[8:9], v[10:11], v[6:7] op_sel_hi:[1,0]
	v_pk_mul_f32 v[6:7], v[12:13], v[6:7] op_sel_hi:[1,0]
	v_pk_add_f32 v[2:3], v[2:3], v[8:9]
	v_pk_add_f32 v[4:5], v[4:5], v[6:7]
	v_pk_mul_f32 v[8:9], v[14:15], v[2:3]
	v_pk_mul_f32 v[6:7], v[16:17], v[4:5]
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
	s_and_saveexec_b64 s[0:1], s[20:21]
	s_cbranch_execz .LBB0_92
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v6, v6, v7
	ds_write_b32 v49, v6
.LBB0_92:
	s_or_b64 exec, exec, s[0:1]
	s_mov_b32 s62, s46
	s_mov_b32 s63, s47
	buffer_store_dwordx4 v[2:5], v57, s[60:63], 0 offen
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execz .LBB0_94
	ds_read_b128 v[2:5], v51 offset:24896
	ds_read_b128 v[6:9], v51 offset:24880
	ds_read_b128 v[10:13], v51 offset:24864
	ds_read_b128 v[14:17], v51 offset:24848
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
	s_lshl3_add_u32 s26, s34, s26
	v_add_f32_e32 v2, v2, v4
	s_add_i32 s26, s26, 0x14000
	v_add_f32_e32 v2, v2, v5
	v_mov_b32_e32 v3, s33
	s_mov_b32 s89, s73
	s_mov_b32 s90, s74
	s_mov_b32 s91, s75
	v_mov_b32_e32 v4, s26
	buffer_store_dwordx2 v[2:3], v4, s[88:91], 0 offen offset:2000 sc0 sc1
.LBB0_94:
	s_or_b64 exec, exec, s[0:1]
	s_barrier
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execz .LBB0_96
	s_memrealtime s[26:27]
	s_lshl_b32 s29, s78, 3
	v_mov_b32_e32 v2, s29
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[4:5], s[26:27]
	ds_write_b64 v2, v[4:5] offset:24760
	s_memrealtime s[26:27]
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[2:3], s[26:27]
	ds_write_b64 v51, v[2:3] offset:24672
.LBB0_96:
	s_or_b64 exec, exec, s[0:1]
	s_and_saveexec_b64 s[50:51], s[22:23]
	s_cbranch_execz .LBB0_102
	s_add_i32 s0, s28, s30
	s_addk_i32 s0, 0xf971
	s_lshl_b32 s87, s31, 6
	v_add_u32_e32 v2, s0, v56
	s_add_i32 s62, s87, 0x14808
	s_add_i32 s63, s87, 0x147d0
	s_add_i32 s72, s87, 0x147d8
	s_add_i32 s79, s87, 0x147e0
	s_add_i32 s82, s87, 0x147e8
	s_add_i32 s83, s87, 0x147f0
	s_add_i32 s86, s87, 0x147f8
	s_add_i32 s87, s87, 0x14800
	v_lshl_add_u32 v20, v2, 3, v54
	s_mov_b64 s[54:55], 0
	;;#ASMSTART
	; kda-sim: poll k.norm ONRM+PROJ
	;;#ASMEND
	s_branch .LBB0_99
.LBB0_98:
	s_or_b64 exec, exec, s[0:1]
	s_and_b64 s[0:1], exec, s[58:59]
	s_or_b64 s[54:55], s[0:1], s[54:55]
	s_andn2_b64 exec, exec, s[54:55]
	s_cbranch_execz .LBB0_101
.LBB0_99:
	s_mov_b32 s89, s73
	s_mov_b32 s90, s74
	s_mov_b32 s91, s75
	v_mov_b32_e32 v2, s63
	v_mov_b32_e32 v4, s72
	v_mov_b32_e32 v6, s79
	buffer_load_dwordx2 v[2:3], v2, s[88:91], 0 offen sc0 sc1
	s_nop 0
	buffer_load_dwordx2 v[4:5], v4, s[88:91], 0 offen sc0 sc1
	s_nop 0
	buffer_load_dwordx2 v[6:7], v6, s[88:91], 0 offen sc0 sc1
	v_mov_b32_e32 v8, s82
	v_mov_b32_e32 v14, s86
	v_mov_b32_e32 v16, s87
	v_mov_b32_e32 v9, s83
	buffer_load_dwordx2 v[10:11], v8, s[88:91], 0 offen sc0 sc1
	buffer_load_dwordx2 v[12:13], v9, s[88:91], 0 offen sc0 sc1
	s_nop 0
	buffer_load_dwordx2 v[14:15], v14, s[88:91], 0 offen sc0 sc1
	s_nop 0
	buffer_load_dwordx2 v[16:17], v16, s[88:91], 0 offen sc0 sc1
	v_mov_b32_e32 v8, s62
	buffer_load_dwordx2 v[18:19], v8, s[88:91], 0 offen sc0 sc1
	s_nop 0
	buffer_load_dwordx2 v[8:9], v20, s[88:91], 0 offen sc0 sc1
	s_or_b64 s[58:59], s[58:59], exec
	s_waitcnt vmcnt(8)
	v_cmp_ne_u32_e32 vcc, s33, v3
	s_waitcnt vmcnt(7)
	v_cmp_ne_u32_e64 s[0:1], s33, v5
	s_waitcnt vmcnt(6)
	v_cmp_ne_u32_e64 s[26:27], s33, v7
	s_or_b64 s[0:1], vcc, s[0:1]
	s_waitcnt vmcnt(5)
	v_cmp_ne_u32_e64 s[28:29], s33, v11
	s_or_b64 s[0:1], s[0:1], s[26:27]
	s_waitcnt vmcnt(4)
	v_cmp_ne_u32_e64 s[30:31], s33, v13
	s_or_b64 s[0:1], s[0:1], s[28:29]
	s_waitcnt vmcnt(3)
	v_cmp_ne_u32_e64 s[34:35], s33, v15
	s_or_b64 s[0:1], s[0:1], s[30:31]
	s_waitcnt vmcnt(2)
	v_cmp_ne_u32_e64 s[36:37], s33, v17
	s_or_b64 s[0:1], s[0:1], s[34:35]
	s_waitcnt vmcnt(1)
	v_cmp_ne_u32_e64 s[38:39], s33, v19
	s_or_b64 s[0:1], s[0:1], s[36:37]
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e64 s[40:41], s33, v9
	s_or_b64 s[0:1], s[0:1], s[38:39]
	s_or_b64 s[26:27], s[0:1], s[40:41]
	s_and_saveexec_b64 s[0:1], s[26:27]
	s_cbranch_execz .LBB0_98
	s_andn2_b64 s[58:59], s[58:59], exec
	s_sleep 1
	s_branch .LBB0_98
.LBB0_101:
	s_or_b64 exec, exec, s[54:55]
	v_add_f32_e32 v2, 0, v2
	v_add_f32_e32 v2, v2, v4
	v_add_f32_e32 v2, v2, v6
	v_add_f32_e32 v2, v2, v10
	v_add_f32_e32 v2, v2, v12
	v_add_f32_e32 v2, v2, v14
	v_add_f32_e32 v2, v2, v16
	v_add_f32_e32 v9, v2, v18
	v_pk_mul_f32 v[2:3], v[8:9], s[42:43]
	ds_read_b32 v4, v50
	v_exp_f32_e32 v2, v2
	v_add_f32_e32 v3, 0x358637bd, v3
	v_rsq_f32_e32 v3, v3
	s_mov_b32 s86, s46
	v_add_f32_e32 v2, 1.0, v2
	v_div_scale_f32 v5, s[0:1], v2, v2, 1.0
	v_rcp_f32_e32 v6, v5
	s_waitcnt lgkmcnt(0)
	v_mul_f32_e32 v3, v3, v4
	v_div_scale_f32 v4, vcc, 1.0, v2, 1.0
	v_mul_f32_e32 v3, v3, v55
	v_fma_f32 v7, -v5, v6, 1.0
	v_fmac_f32_e32 v6, v7, v6
	v_mul_f32_e32 v7, v4, v6
	v_fma_f32 v8, -v5, v7, v4
	v_fmac_f32_e32 v7, v8, v6
	v_fma_f32 v4, -v5, v7, v4
	v_div_fmas_f32 v4, v4, v6, v7
	v_div_fixup_f32 v2, v4, v2, 1.0
	v_mul_f32_e32 v2, v2, v3
	v_add_lshl_u32 v3, s69, v1, 2
	s_mov_b32 s87, s47
	buffer_store_dword v2, v3, s[84:87], 0 offen
.LBB0_102:
	s_or_b64 exec, exec, s[50:51]
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execz .LBB0_53
	s_memrealtime s[26:27]
	s_lshl_b32 s28, s78, 3
	v_mov_b32_e32 v2, s28
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[4:5], s[26:27]
	ds_write_b64 v2, v[4:5] offset:24768
	s_memrealtime s[26:27]
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[2:3], s[26:27]
	ds_write_b64 v51, v[2:3] offset:24680
	s_branch .LBB0_53
.LBB0_104:
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execz .LBB0_106
	s_memrealtime s[4:5]
	v_mov_b32_e32 v1, 0x6088
	v_mov_b64_e32 v[4:5], s[2:3]
	v_mov_b32_e32 v2, s64
	v_mov_b32_e32 v3, 0
	s_waitcnt lgkmcnt(0)
	v_mov_b64_e32 v[6:7], s[4:5]
	ds_write2_b64 v1, v[6:7], v[4:5] offset1:1
	ds_write_b64 v3, v[2:3] offset:24728
.LBB0_106:
	s_or_b64 exec, exec, s[0:1]
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[0:1], s[24:25]
	s_cbranch_execz .LBB0_108
	v_lshlrev_b32_e32 v1, 3, v0
	ds_read_b64 v[2:3], v1 offset:24592
	s_mul_i32 s0, s2, 23
	s_and_b32 s5, s71, 0xffff
	s_mov_b32 s7, 0x27000
	s_mov_b32 s6, -1
	s_mov_b32 s4, s70
	v_add_lshl_u32 v0, s0, v0, 3
	s_waitcnt lgkmcnt(0)
	buffer_store_dwordx2 v[2:3], v0, s[4:7], 0 offen
.LBB0_108:
	s_endpgm
.LBB0_109:
	s_movk_i32 s0, 0x90
	v_cmp_gt_u32_e32 vcc, s0, v0
	s_and_saveexec_b64 s[18:19], vcc
	s_cbranch_execz .LBB0_115
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
	s_mov_b64 s[22:23], 0
	s_mov_b32 s72, s66
	;;#ASMSTART
	; kda-sim: poll gate PART
	;;#ASMEND
	s_branch .LBB0_112
	.p2align	5
.LBB0_111:
	s_or_b64 exec, exec, s[0:1]
	s_and_b64 s[0:1], exec, s[26:27]
	s_or_b64 s[22:23], s[0:1], s[22:23]
	s_andn2_b64 exec, exec, s[22:23]
	s_cbranch_execz .LBB0_114
.LBB0_112:
	buffer_load_dwordx2 v[2:3], v19, s[72:75], 0 offen sc0 sc1
	buffer_load_dwordx2 v[4:5], v22, s[72:75], 0 offen sc0 sc1
	buffer_load_dwordx2 v[6:7], v23, s[72:75], 0 offen sc0 sc1
	buffer_load_dwordx2 v[8:9], v24, s[72:75], 0 offen sc0 sc1
	buffer_load_dwordx2 v[10:11], v25, s[72:75], 0 offen sc0 sc1
	buffer_load_dwordx2 v[12:13], v26, s[72:75], 0 offen sc0 sc1
	buffer_load_dwordx2 v[14:15], v18, s[72:75], 0 offen sc0 sc1
	s_or_b64 s[26:27], s[26:27], exec
	s_waitcnt vmcnt(6)
	v_cmp_ne_u32_e32 vcc, s33, v3
	s_waitcnt vmcnt(5)
	v_cmp_ne_u32_e64 s[0:1], s33, v5
	s_waitcnt vmcnt(4)
	v_cmp_ne_u32_e64 s[6:7], s33, v7
	s_or_b64 s[0:1], vcc, s[0:1]
	s_waitcnt vmcnt(3)
	v_cmp_ne_u32_e64 s[8:9], s33, v9
	s_or_b64 s[0:1], s[0:1], s[6:7]
	s_waitcnt vmcnt(2)
	v_cmp_ne_u32_e64 s[10:11], s33, v11
	s_or_b64 s[0:1], s[0:1], s[8:9]
	s_waitcnt vmcnt(1)
	v_cmp_ne_u32_e64 s[12:13], s33, v13
	s_or_b64 s[0:1], s[0:1], s[10:11]
	s_waitcnt vmcnt(0)
	v_cmp_ne_u32_e64 s[14:15], s33, v15
	s_or_b64 s[0:1], s[0:1], s[12:13]
	s_or_b64 s[6:7], s[0:1], s[14:15]
	s_and_saveexec_b64 s[0:1], s[6:7]
	s_cbranch_execz .LBB0_111
	s_andn2_b64 s[26:27], s[26:27], exec
	s_sleep 1
	s_branch .LBB0_111
.LBB0_114:
	s_or_b64 exec, exec, s[22:23]
	v_add_f32_e32 v2, 0, v2
	v_add_f32_e32 v2, v2, v4
	v_add_f32_e32 v2, v2, v6
	v_add_f32_e32 v2, v2, v8
	v_add_f32_e32 v2, v2, v10
	v_add_f32_e32 v2, v2, v12
	v_add_f32_e32 v2, v2, v14
	v_lshlrev_b32_e32 v3, 2, v17
	ds_write_b32 v3, v2 offset:14352
.LBB0_115:
	s_or_b64 exec, exec, s[18:19]
	v_min_i32_e32 v2, 8, v21
	v_lshlrev_b32_e32 v3, 3, v2
	v_add_u32_e32 v3, 0x3800, v3
	s_waitcnt lgkmcnt(0)
	s_barrier
	ds_read2_b64 v[4:7], v3 offset0:2 offset1:11
	ds_read2_b64 v[8:11], v3 offset0:20 offset1:29
	ds_read2_b64 v[12:15], v3 offset0:38 offset1:47
	v_cmp_gt_u32_e32 vcc, 9, v21
	s_cmp_eq_u32 s34, 0
	s_waitcnt lgkmcnt(2)
	v_pk_add_f32 v[18:19], v[4:5], v[6:7]
	ds_read2_b64 v[4:7], v3 offset0:56 offset1:65
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
	v_add_f32_e32 v3, 0x358637bd, v3
	v_rsq_f32_e32 v3, v3
	v_mov_b32_e32 v4, 0xff61b1e6
	v_mul_f32_e32 v3, v5, v3
	v_mul_f32_e32 v3, 0x3fb8aa3b, v3
	v_cndmask_b32_e32 v3, v4, v3, vcc
	v_mov_b32_e32 v4, v3
	v_mov_b32_e32 v5, v3
	s_nop 1
	v_permlane32_swap_b32_e32 v4, v5
	v_cmp_eq_u32_e64 s[0:1], v4, v3
	s_nop 1
	v_cndmask_b32_e64 v4, v4, v5, s[0:1]
	v_cmp_lt_f32_e64 s[0:1], v3, v4
	s_nop 1
	v_cndmask_b32_e64 v4, v3, v4, s[0:1]
	v_mov_b32_e32 v5, v4
	v_mov_b32_e32 v6, v4
	s_nop 1
	v_permlane16_swap_b32_e32 v5, v6
	v_cmp_eq_u32_e64 s[0:1], v5, v4
	s_nop 1
	v_cndmask_b32_e64 v5, v5, v6, s[0:1]
	v_cmp_lt_f32_e64 s[0:1], v4, v5
	s_nop 1
	v_cndmask_b32_e64 v4, v4, v5, s[0:1]
	ds_swizzle_b32 v5, v4 offset:swizzle(SWAP,8)
	s_waitcnt lgkmcnt(0)
	v_cmp_lt_f32_e64 s[0:1], v4, v5
	s_nop 1
	v_cndmask_b32_e64 v4, v4, v5, s[0:1]
	ds_swizzle_b32 v5, v4 offset:swizzle(SWAP,4)
	s_waitcnt lgkmcnt(0)
	v_cmp_lt_f32_e64 s[0:1], v4, v5
	s_nop 1
	v_cndmask_b32_e64 v4, v4, v5, s[0:1]
	ds_swizzle_b32 v5, v4 offset:swizzle(SWAP,2)
	s_waitcnt lgkmcnt(0)
	v_cmp_lt_f32_e64 s[0:1], v4, v5
	s_nop 1
	v_cndmask_b32_e64 v4, v4, v5, s[0:1]
	ds_swizzle_b32 v5, v4 offset:swizzle(SWAP,1)
	s_waitcnt lgkmcnt(0)
	v_cmp_lt_f32_e64 s[0:1], v4, v5
	s_nop 1
	v_cndmask_b32_e64 v4, v4, v5, s[0:1]
	v_sub_f32_e32 v3, v3, v4
	v_exp_f32_e32 v3, v3
	s_nop 0
	v_cndmask_b32_e32 v4, 0, v3, vcc
	v_mov_b32_e32 v3, v4
	v_mov_b32_e32 v5, v4
	s_nop 1
	v_permlane32_swap_b32_e32 v3, v5
	v_cmp_eq_u32_e64 s[0:1], v3, v4
	s_nop 1
	v_cndmask_b32_e64 v3, v3, v5, s[0:1]
	v_add_f32_e32 v3, v4, v3
	v_mov_b32_e32 v5, v3
	v_mov_b32_e32 v6, v3
	s_nop 1
	v_permlane16_swap_b32_e32 v5, v6
	v_cmp_eq_u32_e64 s[0:1], v5, v3
	s_nop 1
	v_cndmask_b32_e64 v5, v5, v6, s[0:1]
	v_add_f32_e32 v3, v3, v5
	ds_swizzle_b32 v5, v3 offset:swizzle(SWAP,8)
	s_cselect_b64 s[0:1], -1, 0
	s_and_b64 s[6:7], s[0:1], vcc
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v3, v3, v5
	ds_swizzle_b32 v5, v3 offset:swizzle(SWAP,4)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v3, v3, v5
	ds_swizzle_b32 v5, v3 offset:swizzle(SWAP,2)
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v3, v3, v5
	ds_swizzle_b32 v6, v3 offset:swizzle(SWAP,1)
	s_and_saveexec_b64 s[0:1], s[6:7]
	s_cbranch_execz .LBB0_117
	v_mad_u64_u32 v[8:9], s[6:7], s2, 10, v[2:3]
	v_mov_b32_e32 v2, 0x1000
	v_lshl_add_u32 v2, v8, 3, v2
	v_mov_b32_e32 v5, s33
	s_mov_b32 s72, s66
	buffer_store_dwordx2 v[4:5], v2, s[72:75], 0 offen offset:3968 sc0 sc1
.LBB0_117:
	s_or_b64 exec, exec, s[0:1]
	v_or_b32_e32 v2, s34, v21
	v_cmp_eq_u32_e32 vcc, 0, v2
	s_and_saveexec_b64 s[0:1], vcc
	s_cbranch_execz .LBB0_119
	s_mul_i32 s6, s2, 0x50
	s_addk_i32 s6, 0x1000
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v2, v3, v6
	v_mov_b32_e32 v3, s33
	s_mov_b32 s72, s66
	v_mov_b32_e32 v4, s6
	buffer_store_dwordx2 v[2:3], v4, s[72:75], 0 offen offset:4040 sc0 sc1
.LBB0_119:
	s_or_b64 exec, exec, s[0:1]
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_and_saveexec_b64 s[0:1], s[4:5]
	s_cbranch_execnz .LBB0_11
	s_branch .LBB0_12
.Lfunc_end0:
	.size	k1_kda_pre_R1_L1_nb8_k0_tl, .Lfunc_end0-k1_kda_pre_R1_L1_nb8_k0_tl
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel k1_kda_pre_R1_L1_nb8_k0_tl
		.amdhsa_group_segment_fixed_size 24916
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 148
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
		.amdhsa_next_free_vgpr 134
		.amdhsa_next_free_sgpr 92
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

	.set .Lk1_kda_pre_R1_L1_nb8_k0_tl.num_vgpr, 134
	.set .Lk1_kda_pre_R1_L1_nb8_k0_tl.num_agpr, 0
	.set .Lk1_kda_pre_R1_L1_nb8_k0_tl.numbered_sgpr, 92
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
    .group_segment_fixed_size: 24916
    .kernarg_segment_align: 8
    .kernarg_segment_size: 148
    .max_flat_workgroup_size: 512
    .name:           k1_kda_pre_R1_L1_nb8_k0_tl
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 512
      - 1
      - 1
    .sgpr_count:     98
    .sgpr_spill_count: 0
    .symbol:         k1_kda_pre_R1_L1_nb8_k0_tl.kd
    .uniform_work_group_size: 1
    .uses_dynamic_stack: false
    .vgpr_count:     134
    .vgpr_spill_count: 0
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa-unknown-gfx950
amdhsa.version:
  - 1
  - 2
...

	.end_amdgpu_metadata
