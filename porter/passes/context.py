"""State shared while translating one source file: rules, runtime names used, per-class IR and signatures."""

from dataclasses import dataclass, field

import libcst as cst

from porter.ir.module_ir import Adjustment, ModuleIR, Unsupported
from porter.rules.registry import load_all_rules
from porter.runtime import runtime_index

# Attribute names that are properties or methods of keras.Model/Layer: renamed in Keras, torch name kept.
KERAS_RESERVED = {
    "layers", "weights", "name", "trainable", "input", "output", "dtype", "variables", "losses", "metrics",
    "built", "inputs", "outputs", "trainable_weights", "non_trainable_weights", "trainable_variables",
    "non_trainable_variables", "optimizer", "compute_dtype", "variable_dtype", "supports_masking", "call",
    "build", "compile", "fit", "predict", "evaluate", "summary", "save", "get_config", "from_config",
    "input_shape", "output_shape", "submodules", "stateless", "path", "quantize", "state", "init_args",
    "torch_names", "torch_state", "porter_layout", "layout_out", "parameter", "loss", "training",
    "add_weight", "add_loss", "count_params", "compute_output_shape", "get_weights", "set_weights",
    "distribute_strategy", "jit_compile", "run_eagerly", "history", "stop_training", "seed_generator",
}
# the private names of a Keras 3 Layer and Model (class and instance, built and called): an attribute of the user's
# class spelling one (DARTS's `self._layers = layers`, an int; `self._losses`, which Keras empties on every call)
# would overwrite Keras's own, so it is renamed as the public ones are (tests/passes/test_keras_reserved.py reads
# them off the installed Keras)
KERAS_PRIVATE = frozenset({
    "_add_trackable_child", "_add_variable_with_custom_getter", "_aggregate_additional_loss",
    "_allow_non_tensor_positional_args", "_api_export_path", "_api_export_symbol_id", "_assert_compile_called",
    "_assert_input_compatibility", "_assign_variable_values", "_auto_config", "_autoconvert_optionals", "_awq_call",
    "_build_at_init", "_build_by_run_for_kwargs", "_build_by_run_for_single_pos_arg", "_build_shapes_dict",
    "_call_context_args", "_call_has_context_arg", "_call_has_mask_arg", "_call_has_training_arg", "_call_signature",
    "_called", "_check_load_own_variables", "_check_quantize_args", "_check_super_called", "_checkpoint_adapter",
    "_checkpoint_dependencies", "_clear_losses", "_compile_loss", "_compile_metrics", "_compiled_metrics_update_state",
    "_compute_loss", "_compute_loss_has_training_arg", "_convert_input_args", "_convert_tracked_collections",
    "_copy_trackable_to_cpu", "_create_nested_dict", "_default_save_signature", "_deferred_dependencies",
    "_delete_tracking", "_deserialization_dependencies", "_deserialize_from_proto", "_distribute_strategy",
    "_dtype_policy", "_export_to_saved_model_graph", "_flatten_layers", "_flatten_metrics_in_order",
    "_flatten_nested_dict", "_float8_call", "_functional", "_gather_saveables_for_checkpoint", "_get_call_context",
    "_get_metrics_result_or_logs", "_get_node_attribute_at_index", "_get_own_losses", "_get_own_metrics",
    "_get_regularization_losses", "_get_save_spec", "_get_variable_map", "_gptq_call", "_handle_deferred_dependencies",
    "_inbound_nodes", "_initial_epoch", "_initialize_tracker", "_input_spec", "_int4_call", "_int8_call",
    "_jit_compile", "_layers", "_lock", "_lock_state", "_lookup_dependency", "_loss_ids", "_loss_tracker", "_losses",
    "_losses_override", "_make_function", "_maybe_build", "_maybe_initialize_trackable", "_maybe_reset_call_context",
    "_maybe_symbolic_build", "_metrics", "_name_based_attribute_restore", "_name_based_restores", "_no_dependency",
    "_non_trainable_variables", "_not_implemented_error", "_obj_type", "_object_identifier", "_open_name_scope",
    "_outbound_nodes", "_parent_path", "_path", "_post_build", "_post_quantize", "_post_track_variable",
    "_post_untrack_variable", "_preload_simple_restoration", "_quantization_mode_error", "_register_call_context_args",
    "_remat_mode", "_resolve_and_populate_arg", "_resolve_auto_jit_compile", "_restore_from_tensors", "_run_eagerly",
    "_saved_model_arg_spec", "_saved_model_inputs_spec", "_seed_generators", "_self_name_based_restores",
    "_self_saveable_object_factories", "_self_setattr_tracking", "_self_unconditional_checkpoint_dependencies",
    "_self_unconditional_deferred_dependencies", "_self_unconditional_dependency_names", "_self_update_uid",
    "_serialize_to_proto", "_serialize_to_tensors", "_set_mask_metadata", "_set_save_spec", "_setattr_hook",
    "_setattr_tracking", "_should_eval", "_supports_masking", "_symbolic_build", "_tf_api_names", "_tf_api_names_v1",
    "_track_trackable", "_track_variable", "_trackable_children", "_tracked", "_tracker", "_trainable",
    "_trainable_variables", "_unconditional_checkpoint_dependencies", "_unconditional_dependency_names",
    "_unpickle_model", "_untrack_variable", "_update_uid", "_warn_if_trainable_state_changed"
})
KERAS_RESERVED |= KERAS_PRIVATE


def runtime_renames(source):
    """Runtime definitions whose names the user's file also uses (a local `mean`, a class `Linear`) get new names."""
    # names as variables use them: `nn.Linear` uses `nn`, not `Linear`; keyword names (`dim=`) are not variables
    not_variables = {id(node.attr) for node in source.nodes_in(source.module, cst.Attribute)}
    not_variables |= {id(node.keyword) for node in source.nodes_in(source.module, cst.Arg) if node.keyword}
    names = {node.value for node in source.nodes_in(source.module, cst.Name) if id(node) not in not_variables}
    index = runtime_index()
    taken = names | set(index)
    renames = {}
    for name in sorted(index):
        if name in names:
            new = f"Torch{name}" if name[:1].isupper() else f"torch_{name.lstrip('_')}"
            while new in taken:
                new += "_"
            taken.add(new)
            renames[name] = new
    return renames


# libraries that only draw or display (plots, notebook widgets, progress bars): never model code
DISPLAY_LIBRARIES = frozenset({"matplotlib", "matplotlib_inline", "IPython", "seaborn", "plotly", "tqdm"})


@dataclass
class ClassSignature:
    """How a translated class is called: the layout of each tensor argument and what `call` returns."""

    arg_values: tuple  # Value per forward parameter as the class receives it
    output: object = None  # Value template of the return (code unused)
    done: bool = False
    callee: str | None = None  # a function translated again for other layouts: the name of that translation


@dataclass
class FileContext:
    source: object
    main_class: str | None = None
    init_args: dict = field(default_factory=dict)
    builds_the_model: bool = True  # the main class is the model (not a package file's class ported beside it)
    model_entry: object = None  # the ModelEntry of the factory building the main class (frontend/model_entry.py)
    used_runtime: set = field(default_factory=set)
    display_code: bool = False  # translating code that draws: what it cannot translate is listed, not a stub
    irs: dict = field(default_factory=dict)  # class name -> ModuleIR
    signatures: dict = field(default_factory=dict)  # class name -> ClassSignature
    method_signatures: dict = field(default_factory=dict)  # (class, method) -> ClassSignature
    function_signatures: dict = field(default_factory=dict)
    current: list = field(default_factory=list)  # stack of ModuleIR being translated
    reserved_names: set = field(default_factory=set)
    renames: dict = field(default_factory=dict)  # runtime name -> emitted name when a user name collides
    channels_last_io: bool = False  # porter convert --channels-last-io: the main class's images are NHWC
    line: int | None = None  # the source line being translated (op nodes record it)
    module_values: dict = field(default_factory=dict)  # module-level name -> Value (`MEAN = torch.tensor(...)`)
    lambda_signatures: dict = field(default_factory=dict)  # id(lambda) -> LambdaSignature (lambda_signatures.py)
    lambda_conflicts: set = field(default_factory=set)  # ids of lambdas whose calls disagree with their signature
    lambda_banned: frozenset = frozenset()  # ids of lambdas called as plain callables (a translation again)

    def __post_init__(self):
        self.module_rules, self.function_rules = load_all_rules()
        self.renames = runtime_renames(self.source)

    def use(self, runtime_name):
        """Mark a runtime definition as needed; returns the name to emit for it."""
        self.used_runtime.add(runtime_name)
        return self.renames.get(runtime_name, runtime_name)

    def covers_name(self, canonical):
        """Whether a rule covers `canonical` (`torch.nn.functional.relu`)."""
        return canonical in self.function_rules or canonical in self.module_rules

    def rule_namespace(self, canonical):
        """Whether rules cover names under `canonical` (`torch.nn`, `torch.nn.functional`)."""
        if "rule_namespaces" not in self.__dict__:
            self.rule_namespaces = {name.rsplit(".", i)[0] for name in (*self.function_rules, *self.module_rules)
                                    for i in range(1, name.count(".") + 1)}
        return canonical in self.rule_namespaces

    @property
    def ir(self):
        return self.current[-1] if self.current else None

    def ir_for(self, info):
        if info.name not in self.irs:
            self.irs[info.name] = ModuleIR(info.name, info.line)
        return self.irs[info.name]

    def stub_owner(self):
        """The ModuleIR a stub is listed in: the class being translated; outside any class (a helper function or
        config method the model uses, module-level code, which runs first), the main class."""
        owner = self.ir
        if owner is None and self.main_class in self.source.classes:
            owner = self.ir_for(self.source.classes[self.main_class])
        elif owner is None:
            owner = self.irs.get(self.main_class)
        return owner

    def pretrained_weights(self, line, construct):
        """A call that downloads or reads pretrained weights (`torch.load`, a function of the file doing so) in code
        the port carries (MONAI's HoVerNet loads its encoder's in `__init__` when given a URL): I/O, not model code.
        Listed as an adjustment, not a stub of the model; the stub raises if reached. Returns its message."""
        owner = self.stub_owner()
        if owner is not None:
            note = Adjustment(line, f"{construct}: reads pretrained weights, a stub that raises if reached (the port "
                                    f"loads weights with `porter convert --weights` and load_state_dict)")
            if note not in owner.adjustments:
                owner.adjustments.append(note)
        self.used_runtime.add("not_supported")
        name, line = self.source.origin(line)
        return f"{construct} at {name}:{line} reads pretrained weights: convert them with porter convert --weights"

    def unsupported(self, line, construct, reason):
        owner = self.stub_owner()
        if owner is not None and (construct.split(".")[0] in DISPLAY_LIBRARIES or self.display_code):
            # plotting and notebook display code the model's helpers reach (d2l's ProgressBoard): not model code,
            # so listed, not counted as a stub of the model
            note = Adjustment(line, f"{construct}: plotting/display code, a stub that raises if called")
            if note not in owner.adjustments:
                owner.adjustments.append(note)
        elif owner is not None:
            record = Unsupported(line, construct, reason)
            if record not in owner.unsupported:
                owner.unsupported.append(record)
        self.used_runtime.add("not_supported")
        name, line = self.source.origin(line)  # a linked definition's stub names its own file's line
        return f"{construct} at {name}:{line} is not supported yet"

    def adjust(self, line, text):
        if self.ir is not None and Adjustment(line, text) not in self.ir.adjustments:
            self.ir.adjustments.append(Adjustment(line, text))
