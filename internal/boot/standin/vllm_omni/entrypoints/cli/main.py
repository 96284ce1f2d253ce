# Stand-in for vllm_omni.entrypoints.cli.main, the `vllm-omni` script's
# module: its main() reads sys.argv as vllm's would be, and here runs the
# stand-in vllm that sys.argv[0] names, in this process, as vllm-omni's CLI
# runs serve in the process that imported the registration. The project's
# own code.
import runpy
import sys


def main():
    runpy.run_path(sys.argv[0], run_name="__main__")
    return 0
