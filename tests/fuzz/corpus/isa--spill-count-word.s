	.amdgcn_target "amdgcn-amd-amdhsa-unknown-gfx950"
	.amdhsa_code_object_version 6
	.text
	.globl	probe_publish_drained_0
	.p2align	8
	.type	probe_publish_drained_0,@function
probe_publish_drained_0:
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_load_dwordx4 s[8:11], s[0:1], 0x10
	s_mov_b32 s7, 0x27000
	s_mov_b32 s6, -1
	v_lshlrev_b32_e32 v1, 4, v0
	s_waitcnt lgkmcnt(0)
	s_and_b32 s5, s5, 0xffff
	buffer_load_dwordx4 v[2:5], v1, s[4:7], 0 offen nt
	s_mov_b32 s14, s6
	s_mov_b32 s15, s7
	s_and_b32 s13, s9, 0xffff
	s_mov_b32 s12, s8
	v_cmp_eq_u32_e32 vcc, 0, v0
	s_waitcnt vmcnt(0)
	buffer_store_dwordx4 v[2:5], v1, s[12:15], 0 offen sc0 sc1
	s_waitcnt vmcnt(0)
	s_barrier
	;;#ASMSTART
	; kda-sim: publish probe FLAG
	;;#ASMEND
	s_and_saveexec_b64 s[2:3], vcc
	s_cbranch_execz .LBB0_2
	s_load_dword s0, s[0:1], 0x20
	v_mov_b32_e32 v0, 1
	s_and_b32 s5, s11, 0xffff
	s_mov_b32 s4, s10
	s_waitcnt lgkmcnt(0)
	v_mov_b32_e32 v1, s0
	buffer_store_dwordx2 v[0:1], off, s[4:7], 0 sc0 sc1
.LBB0_2:
	s_endpgm
.Lfunc_end0:
	.size	probe_publish_drained_0, .Lfunc_end0-probe_publish_drained_0
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel probe_publish_drained_0
		.amdhsa_group_segment_fixed_size 0
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 36
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
		.amdhsa_next_free_vgpr 6
		.amdhsa_next_free_sgpr 16
		.amdhsa_accum_offset 8
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

	.set .Lprobe_publish_drained_0.num_vgpr, 6
	.set .Lprobe_publish_drained_0.num_agpr, 0
	.set .Lprobe_publish_drained_0.numbered_sgpr, 16
	.set .Lprobe_publish_drained_0.num_named_barrier, 0
	.set .Lprobe_publish_drained_0.private_seg_size, 0
	.set .Lprobe_publish_drained_0.uses_vcc, 1
	.set .Lprobe_publish_drained_0.uses_flat_scratch, 0
	.set .Lprobe_publish_drained_0.has_dyn_sized_stack, 0
	.set .Lprobe_publish_drained_0.has_recursion, 0
	.set .Lprobe_publish_drained_0.has_indirect_call, 0
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
      - .offset:         32
        .size:           4
        .value_kind:     by_value
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 36
    .max_flat_workgroup_size: 128
    .name:           probe_publish_drained_0
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 128
      - 1
      - 1
    .sgpr_count:     22
    .sgpr_spill_count: 0
    .symbol:         probe_publish_drained_0.kd
    .uniform_work_group_size: 1
    .uses_dynamic_stack: false
    .vgpr_count:     6
    .vgpr_spill_count: zero
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa-unknown-gfx950
amdhsa.version:
  - 1
  - 2
...

	.end_amdgpu_metadata
