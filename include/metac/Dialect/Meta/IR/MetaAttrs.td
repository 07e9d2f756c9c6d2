//===- MetaAttrs.td - meta dialect attributes --------------*- tablegen -*-===//
//
// Algorithms, optimizers, losses and parallel plans as typed attributes, each
// verified where it is built, so a bad value is reported at its spec location.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_DIALECT_META_IR_METAATTRS_TD
#define METAC_DIALECT_META_IR_METAATTRS_TD

include "metac/Dialect/Meta/IR/MetaBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Meta_LossKind : I32EnumAttr<"LossKind", "task loss", [
    I32EnumAttrCase<"MSE", 0, "mse">,
    I32EnumAttrCase<"CrossEntropy", 1, "cross_entropy">]> {
  let cppNamespace = "::metac::meta";
  let genSpecializedAttr = 0;
}
def Meta_LossAttr : EnumAttr<Meta_Dialect, Meta_LossKind, "loss"> {
  // `#meta.loss<mse>`, and `loss <mse>` in meta.train.
  let assemblyFormat = "`<` $value `>`";
}

def Meta_PipelineSchedule : I32EnumAttr<"PipelineSchedule",
    "micro-batch schedule of pipeline stages", [
    I32EnumAttrCase<"GPipe", 0, "gpipe">,
    I32EnumAttrCase<"OneFOneB", 1, "1f1b">,
    I32EnumAttrCase<"PipeDream", 2, "pipedream">]> {
  let cppNamespace = "::metac::meta";
  // `1f1b` is not a keyword: print it as a string so that it parses back.
  let parameterPrinter =
      "$_printer.printKeywordOrString(stringifyPipelineSchedule($_self))";
}

def Meta_Distance : I32EnumAttr<"Distance", "embedding distance", [
    I32EnumAttrCase<"SquaredEuclidean", 0, "squared_euclidean">]> {
  let cppNamespace = "::metac::meta";
}

class Meta_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Meta_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Algorithms
//===----------------------------------------------------------------------===//

def Meta_MAMLAttr : Meta_Attr<"MAML", "maml"> {
  let summary = "MAML: SGD inner loop, meta-gradient through it";
  let description = [{
    `steps` inner SGD steps of size `inner_lr` on the support loss; the
    meta-gradient of the query loss flows through them exactly when
    `order = 2`, and treats the inner gradients as constants when
    `order = 1` (first-order MAML, FOMAML).
  }];
  let parameters = (ins "int64_t":$steps, Meta_F64Parameter:$inner_lr,
                        "int64_t":$order);
}

def Meta_ReptileAttr : Meta_Attr<"Reptile", "reptile"> {
  let summary = "Reptile: outer update towards the adapted parameters";
  let description = [{
    `steps` inner SGD steps of size `inner_lr`; the outer optimizer receives
    `theta - phi` averaged over tasks as its gradient, so SGD with learning
    rate epsilon gives `theta <- theta + epsilon * mean(phi - theta)`.
  }];
  let parameters = (ins "int64_t":$steps, Meta_F64Parameter:$inner_lr);
}

def Meta_ANILAttr : Meta_Attr<"ANIL", "anil"> {
  let summary = "ANIL: the inner loop adapts only the head";
  let description = [{
    As MAML, but only parameters whose name starts with `head` are adapted
    in the inner loop; the body is shared and trained by the outer loop.
  }];
  let parameters = (ins "int64_t":$steps, Meta_F64Parameter:$inner_lr,
                        "int64_t":$order, StringRefParameter<"head prefix">:$head);
}

def Meta_MetaSGDAttr : Meta_Attr<"MetaSGD", "metasgd"> {
  let summary = "Meta-SGD: meta-learned per-parameter inner learning rates";
  let description = [{
    As MAML, with one learned inner learning rate per parameter element,
    initialised to `inner_lr`.
  }];
  let parameters = (ins "int64_t":$steps, Meta_F64Parameter:$inner_lr,
                        "int64_t":$order);
}

def Meta_ProtoNetAttr : Meta_Attr<"ProtoNet", "protonet"> {
  let summary = "Prototypical Networks";
  let description = [{
    Class prototypes are the mean support embeddings; query logits are the
    negative `distance` to each prototype. No inner loop.
  }];
  let parameters = (ins EnumParameter<Meta_Distance>:$distance);
}

def Meta_IMAMLAttr : Meta_Attr<"IMAML", "imaml"> {
  let summary = "iMAML: implicit meta-gradient";
  let description = [{
    `steps` inner steps of size `inner_lr` on the proximal support loss
    `L(phi) + lambda / 2 * |phi - theta|^2`; the meta-gradient solves
    `(I + H / lambda) g = grad L_query(phi)` with `cg_steps` conjugate
    gradient iterations on Hessian-vector products.
  }];
  let parameters = (ins "int64_t":$steps, Meta_F64Parameter:$inner_lr,
                        Meta_F64Parameter:$lambda, "int64_t":$cg_steps);
}

//===----------------------------------------------------------------------===//
// Outer optimizers
//===----------------------------------------------------------------------===//

def Meta_SGDAttr : Meta_Attr<"SGD", "sgd"> {
  let summary = "SGD with optional momentum and weight decay (PyTorch's)";
  let parameters = (ins Meta_F64Parameter:$lr, Meta_F64Parameter:$momentum,
                        Meta_F64Parameter:$weight_decay);
}

def Meta_AdamAttr : Meta_Attr<"Adam", "adam"> {
  let summary = "Adam (PyTorch's, L2 weight decay added to the gradient)";
  let parameters = (ins Meta_F64Parameter:$lr, Meta_F64Parameter:$beta1,
                        Meta_F64Parameter:$beta2, Meta_F64Parameter:$eps,
                        Meta_F64Parameter:$weight_decay);
}

def Meta_AdamWAttr : Meta_Attr<"AdamW", "adamw"> {
  let summary = "AdamW (decoupled weight decay, PyTorch's)";
  let parameters = (ins Meta_F64Parameter:$lr, Meta_F64Parameter:$beta1,
                        Meta_F64Parameter:$beta2, Meta_F64Parameter:$eps,
                        Meta_F64Parameter:$weight_decay);
}

//===----------------------------------------------------------------------===//
// Parallel plan
//===----------------------------------------------------------------------===//

def Meta_PlanAttr : Meta_Attr<"Plan", "plan"> {
  let summary = "an explicit device mesh and pipeline schedule";
  let description = [{
    Sizes of the six mesh axes (their product is the number of ranks;
    `expert` and `sequence` may be left out for 1), the number of micro-batches (task
    groups) per meta-batch and the pipeline schedule.
  }];
  let parameters = (ins "int64_t":$task, "int64_t":$data, "int64_t":$tensor,
                        "int64_t":$pipeline,
                        DefaultValuedParameter<"int64_t", "1">:$expert,
                        DefaultValuedParameter<"int64_t", "1">:$sequence,
                        "int64_t":$micro_batches,
                        EnumParameter<Meta_PipelineSchedule>:$schedule);
  let extraClassDeclaration = [{
    /// The axis sizes in the mesh's order (task, data, tensor, pipeline,
    /// expert, sequence).
    std::array<int64_t, 6> getMeshSizes() const {
      return {getTask(),     getData(),   getTensor(),
              getPipeline(), getExpert(), getSequence()};
    }
  }];
}

def Meta_AlgorithmAttr : AnyAttrOf<[Meta_MAMLAttr, Meta_ReptileAttr,
    Meta_ANILAttr, Meta_MetaSGDAttr, Meta_ProtoNetAttr, Meta_IMAMLAttr]>;

def Meta_OptimizerAttr : AnyAttrOf<[Meta_SGDAttr, Meta_AdamAttr,
    Meta_AdamWAttr]>;

#endif // METAC_DIALECT_META_IR_METAATTRS_TD
