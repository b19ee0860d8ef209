/* A shared object that is not firmware: it lacks the smmu_vp_firmware symbol. */
int not_firmware(void);
int not_firmware(void) { return 0; }
