"""pair_style aisci refuses the DeePMD-kit models it cannot run, with the exact message: a
model calling a table operator of compressed models with a malformed table (the
operator names itself and the problem), a model naming a DeePMD-kit operator that
libaisci_torch does not provide (refused at load, naming it), frame or atomic parameters (get_dim_fparam/get_dim_aparam > 0), an
element not in the model's type map, a precision other than the model's own, and a
dipole model used as an energy model. The toy DeePMD-kit-like files are written here with
Debian's torch (TorchScript modules with the methods of a frozen model)."""
import os
import sys
import tempfile

from aisci_testlib import check, run_lammps, summary
from deepmd_systems import DIPOLE, SEA, WATER6_BOX, WATER6_TYPES, WATER6_X, data_file, need

need(SEA, DIPOLE)
try:
    import torch
except ImportError as e:
    print("SKIPPED: writing the toy models needs torch in this python (%s): %s"
          % (sys.executable, e))
    sys.exit(77)
from typing import Dict, Optional

_lib = torch.library.Library("deepmd", "DEF")    # placeholder, only to script a call to it
_lib.define("tabulate_fusion_se_a(Tensor table, Tensor table_info, Tensor em_x, Tensor em, "
            "int last_layer_size) -> Tensor[]")
_lib.define("tabulate_fusion_se_future(Tensor table) -> Tensor[]")    # not a DeePMD-kit op


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aisci_nn_toy import ToyDeepmdFrozen as ToyFrozen  # noqa: E402


class ToyCompressed(ToyFrozen):
    """Calls the operator of DeePMD-kit's compressed se_e2_a models with a scalar table."""

    @torch.jit.export
    def forward_lower(self, extended_coord: torch.Tensor, extended_atype: torch.Tensor,
                      nlist: torch.Tensor, mapping: Optional[torch.Tensor] = None,
                      fparam: Optional[torch.Tensor] = None,
                      aparam: Optional[torch.Tensor] = None, do_atomic_virial: bool = False,
                      comm_dict: Optional[Dict[str, torch.Tensor]] = None) -> Dict[str, torch.Tensor]:
        e = (extended_coord * self.w).sum()
        return {"energy": torch.ops.deepmd.tabulate_fusion_se_a(e, e, e, e, 4)[0]}


tmp = tempfile.mkdtemp(prefix="aisci_deepmd_err_")
FPARAM = os.path.join(tmp, "fparam.pth")
APARAM = os.path.join(tmp, "aparam.pth")
COMPRESSED = os.path.join(tmp, "compressed.pth")
UNKNOWN_OP = os.path.join(tmp, "unknown_op.pth")


class ToyUnknownOp(ToyFrozen):
    """Names a deepmd:: operator that no library defines."""

    @torch.jit.export
    def forward_lower(self, extended_coord: torch.Tensor, extended_atype: torch.Tensor,
                      nlist: torch.Tensor, mapping: Optional[torch.Tensor] = None,
                      fparam: Optional[torch.Tensor] = None,
                      aparam: Optional[torch.Tensor] = None, do_atomic_virial: bool = False,
                      comm_dict: Optional[Dict[str, torch.Tensor]] = None) -> Dict[str, torch.Tensor]:
        return {"energy": torch.ops.deepmd.tabulate_fusion_se_future(extended_coord)[0]}


torch.jit.save(torch.jit.script(ToyFrozen(dim_fparam=2)), FPARAM)
torch.jit.save(torch.jit.script(ToyFrozen(dim_aparam=3)), APARAM)
torch.jit.save(torch.jit.script(ToyCompressed()), COMPRESSED)
torch.jit.save(torch.jit.script(ToyUnknownOp()), UNKNOWN_OP)

FILES = {"data.lmp": data_file(WATER6_X, WATER6_TYPES, WATER6_BOX)}


def expect_error(label, pair_style, pair_coeff, text, prefix="ERROR: "):
    script = ("units metal\nboundary p p p\natom_style atomic\nread_data data.lmp\n"
              "%s\n%s\nrun 0\n" % (pair_style, pair_coeff))
    r = run_lammps(script, files=FILES)
    check(r.rc != 0, "%s: the run did not fail" % label)
    check((prefix + text) in r.output,
          "%s: expected the error\n  %s\ngot:\n%s" % (label, text, r.output[-1500:]))


load = "pair_style aisci: cannot load model file '%s': "
# DeePMD-kit's table operators are ours (src/USER-AISCI/torch/table_ops.cpp): a call with a
# table that is not one stops at its first evaluation, naming the operator and the shape
expect_error("compressed model, malformed table", "pair_style aisci",
             "pair_coeff * * %s O H" % COMPRESSED,
             "pair_style aisci: model evaluation error: aisci_model_compute_extended: "
             "RuntimeError: deepmd::tabulate_fusion_se_a: the table has shape [], expected "
             "[intervals, 6 x 4]", prefix="ERROR on proc 0: ")
expect_error("operator not provided", "pair_style aisci", "pair_coeff * * %s O H" % UNKNOWN_OP,
             (load % UNKNOWN_OP) + "invalid file or model format: model file '%s' needs the "
             "TorchScript operator deepmd::tabulate_fusion_se_future, which libaisci_torch does "
             "not provide" % UNKNOWN_OP)
expect_error("fparam", "pair_style aisci", "pair_coeff * * %s O H" % FPARAM,
             (load % FPARAM) + "invalid file or model format: DeePMD-kit model file '%s' "
             "needs frame parameters (get_dim_fparam() = 2): fparam is not supported by "
             "pair_style aisci" % FPARAM)
expect_error("aparam", "pair_style aisci", "pair_coeff * * %s O H" % APARAM,
             (load % APARAM) + "invalid file or model format: DeePMD-kit model file '%s' "
             "needs atomic parameters (get_dim_aparam() = 3): aparam is not supported by "
             "pair_style aisci" % APARAM)
expect_error("element not in the type map", "pair_style aisci", "pair_coeff * * %s O C" % SEA,
             "pair_coeff aisci: atom type 2: invalid argument: element 'C' is not in model "
             "file '%s' (its type_names are: O H)" % SEA)
expect_error("precision", "pair_style aisci precision float32", "pair_coeff * * %s O H" % SEA,
             (load % SEA) + "invalid argument: DeePMD-kit model file '%s' is float64 and "
             "casts its inputs itself: precision must be auto (or float64), got float32" % SEA)
expect_error("dipole model as energy model", "pair_style aisci",
             "pair_coeff * * %s O H" % DIPOLE,
             "pair_style aisci: model file '%s' is a DeePMD-kit dipole model (per-atom "
             "vectors): use it as the Wannier model of fix dplr" % DIPOLE)
summary("test_deepmd_errors")
