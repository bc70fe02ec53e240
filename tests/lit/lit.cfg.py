# lit configuration for the golden tests (.tc sources and .tir IR files).
import os
import lit.formats

config.name = "triton-c"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".tc", ".tir"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.tc_test_exec_root
config.substitutions.append(("%tritonc", os.path.join(config.tc_bin_dir, "tritonc")))
config.substitutions.append(("%triton-interp", os.path.join(config.tc_bin_dir, "triton-interp")))
config.substitutions.append(("%examples", os.path.join(config.tc_src_root, "examples")))
config.substitutions.append(("%benchkernels", os.path.join(config.tc_src_root, "bench", "kernels")))
config.substitutions.append(("FileCheck", config.filecheck))
config.substitutions.append(("not ", os.path.join(os.path.dirname(config.filecheck), "not") + " "))
config.environment["PATH"] = config.tc_bin_dir + os.pathsep + config.environment.get("PATH", "")
# `REQUIRES: libdevice`: the build embedded the CUDA toolkit's libdevice, so
# kernels that call math functions compile to PTX.
if config.tc_have_libdevice:
    config.available_features.add("libdevice")
