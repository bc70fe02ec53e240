//===- Lowerer.h - The tile IR -> LLVM IR lowering class (internal) -------===//
//
// Internal to codegen/: the layout model is described in Lower.h. The class is
// in a header so that its larger parts live in their own files
// (LowerDot.cpp: `@`); Lower.cpp holds lowerKernel.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Lower.h"

#include "codegen/AsyncSchedule.h"
#include "codegen/AxisInfo.h"
#include "codegen/Layout.h"
#include "codegen/ScalarEmit.h"
#include "support/PlantedBugs.h"

#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/LowerAtomic.h>

#include <functional>
#include <map>
#include <set>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace tc::codegen::lower {

using Slots = std::vector<llvm::Value *>;

/// Thrown for a construct the GPU backend cannot lower (turned into an error).
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The kernel's shared memory is over the limit; sharedA: a values-pipeline
/// `@` read its loop-invariant a operand from its own shared-memory region
/// (lowerKernel then lowers the kernel again with a from registers).
struct SharedOverflow : Unsupported {
  SharedOverflow(const std::string &what, bool sharedA) : Unsupported(what), sharedA(sharedA) {}
  bool sharedA;
};

/// Slots a thread may own of one tile: more would not fit in registers.
constexpr int64_t kMaxSlotsPerThread = 1024;
/// Dynamic shared memory of one program on sm_80 / sm_90 after opting in.
constexpr size_t kMaxSharedBytes = 227 * 1024;
/// Products of `@` per accumulator written out per trip of its k loop.
constexpr int64_t kDotUnroll = 16;
constexpr int64_t kMaxUnrolledProducts = 8192;
/// Accumulator slots a thread can keep in registers (255 at most), and the
/// products per written-out body of `@` beyond them (LowerDot.cpp).
constexpr int64_t kSpillingSlots = 256;
constexpr int64_t kSpillingProducts = 2048;

/// Whether a reduction of this kind and accumulator gives the same result for
/// any tree (LowerReduce.cpp): max, min, and, or, xor, integer add.
bool reduceAnyOrder(const std::string &kind, DType acc);

/// The body of a `for` (region 0) or a `while` (region 1, after its condition).
inline const ir::Block &loopBody(const ir::Op &loop) {
  return *loop.region(loop.kind() == ir::OpKind::For ? 0 : 1);
}

inline bool isPow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/// The smallest l with 2^l >= x (log2 of a power of two).
inline int log2Ceil(int64_t x) {
  int l = 0;
  while ((int64_t(1) << l) < x)
    ++l;
  return l;
}

inline int64_t product(const ir::Shape &s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t d = from; d < to; ++d)
    p *= s[d];
  return p;
}

/// A coefficient of an index's linear form (option "tma", LowerTma.cpp):
/// k times the integer parameter `param`, or the constant k (param < 0).
struct TmaCoef {
  int64_t k = 0;
  int param = -1;
  bool operator==(const TmaCoef &o) const { return k == o.k && param == o.param; }
};

/// A 32-bit offset tile added to a streamed pointer tile, with its form along
/// each of its axes (LowerTma.cpp: its values must not wrap).
struct TmaNarrow {
  const ir::Value *off = nullptr;
  std::vector<TmaCoef> axes;
};

class Lowerer {
public:
  Lowerer(const ir::Module &m, const ir::Function &fn, const Options &o, llvm::LLVMContext &ctx)
      : irModule_(m), fn_(fn), opts_(o), ctx_(ctx),
        mod_(std::make_unique<llvm::Module>("tc." + fn.name(), ctx)), b_(ctx), se_(b_, *mod_),
        T_(32 * o.numWarps) {}

  void run(LoweredKernel &out) {
    analyseAccesses();
    planLayouts();
    setUpModule();
    lowerBlock(fn_.body(), nullptr);
    if (!b_.GetInsertBlock()->getTerminator())
      b_.CreateBr(exit_);
    b_.SetInsertPoint(exit_);
    b_.CreateRetVoid();
    if (di_)
      di_->finalize();
    if (pipeBase_) {
      // wgmma's swizzled operands need 1024-byte-aligned stages.
      size_t base = (sharedBytes_ + pipeAlign_ - 1) / pipeAlign_ * pipeAlign_;
      pipeBase_->replaceAllUsesWith(b_.getInt32(static_cast<uint32_t>(base)));
      pipeBase_->eraseFromParent();
      sharedBytes_ = base + pipeBytes_;
    }
    finishOccupancy();
    if (sharedBytes_ > kMaxSharedBytes)
      throw SharedOverflow("the kernel stages " + std::to_string(sharedBytes_) +
                               " bytes through shared memory (at most " +
                               std::to_string(kMaxSharedBytes) + "); use smaller tiles",
                           usedSharedA_);
    if (smem_) {
      // Size the declared array for readers of the IR; the launch passes the real size.
      smem_->setAlignment(llvm::Align(pipeAlign_));
    }
    out.entry = fn_.name();
    out.numThreads = T_;
    out.sharedBytes = sharedBytes_;
    out.archSpecific = archSpecific_;
    out.paths.assign(paths_.begin(), paths_.end());
    out.params = params_;
    out.tensorMaps = tensorMaps_;
    out.module = std::move(mod_);
  }

  /// No values-pipeline `@` reads its a operand from shared memory (the
  /// lowering again after a SharedOverflow whose sharedA is set).
  void withoutSharedA() { sharedA_ = false; }

  /// The layouts pass alone (codegen::assignLayouts): what run() would decide.
  KernelLayouts layoutsOnly() {
    analyseAccesses();
    planLayouts();
    return layouts_;
  }

private:
  // ---- Layouts (LowerLayouts.cpp, codegen/Layout.h) ---------------------
  // planLayouts decides, before anything is emitted, the blocked layout's run
  // length (vec_), the loads done by their trans users (deferredLoads_), the
  // broadcasts and trans recomputed (remat_), the accesses done in another
  // axis order (accessPerm_), the `@` on mma.sync (mmaDots_) and the matmul
  // loops (mmaLoops_); the lowering reads these, and layouts_ describes them.
  struct MmaLoop;
  struct StreamChunks;
  void planLayouts();
  void planBlock(const ir::Block &block, int depth);
  void planOp(const ir::Op &op, int depth);
  void planLoop(const MmaLoop &L, int depth);
  void planLoopDot(const MmaLoop &L, int depth);
  Layout streamLayout(const MmaLoop &L, size_t w) const;
  size_t streamBytes(const MmaLoop &L, size_t w) const;
  bool rematDecision(const ir::Op &op);
  Layout blockedOf(const ir::Type &t) const;
  void setLayout(const ir::Value *v, const Layout &l);
  void addConversion(const ir::Op &op, std::string what, Layout from, Layout to,
                     Conversion::Mechanism m, std::string how, size_t bytes, int barriers,
                     int depth);
  KernelLayouts layouts_;
  std::unordered_set<const ir::Op *> remat_;
  std::unordered_map<const ir::Op *, std::vector<int64_t>> accessPerm_;
  std::unordered_set<const ir::Op *> mmaDots_;
  std::unordered_map<const ir::Op *, std::shared_ptr<MmaLoop>> mmaLoops_;

  // ---- Values in mma.sync fragments (LowerMmaValues.cpp) -----------------
  void planMmaValues();
  bool mmaValueShape(const ir::Type &t) const;
  int64_t mmaSlots(const ir::Type &t) const;
  bool mmaUniform(const ir::Value *v) const;
  bool mmaRemat(const ir::Value *v);
  bool mmaValueDot(const ir::Op &op) const;
  bool mmaCarried(const ir::Op &u, const ir::Value *v) const;
  bool mmaCarriedAt(const ir::Op &u, size_t i) const;
  bool mmaLoopInit(const ir::Op &loop, const ir::Value *v) const;
  bool mmaCarriedPermuted(const ir::Op &u, size_t i) const;
  std::unordered_map<const ir::Op *, const ir::Op *> mmaLoopOf_; // yield/condition -> its loop
  // a operands of `@` on #mma defined outside the loop of their `@`: their a
  // fragments are loaded once, where they are defined (value -> its loop depth).
  std::unordered_map<const ir::Value *, int> mmaHoistA_;
  std::unordered_map<const ir::Value *, Slots> mmaAFrags_;
  void storeSharedA(const ir::Value *v, size_t aOff, int64_t aSwizzle);
  void loadHoistedA(const ir::Value *v);
  // The b operands of `@` on #mma loaded in a `for` through carried pointer
  // tiles: copied with cp.async into num_stages shared-memory stages
  // (LowerMmaValues.cpp, "values pipeline"). Loop -> its plan (an MmaLoop
  // whose streams name their `@`).
  std::unordered_map<const ir::Op *, std::shared_ptr<MmaLoop>> valuePipes_;
  // --emit=layouts: why a loop's `@` operand was not streamed, where it helps the author
  std::unordered_map<const ir::Op *, std::string> valuePipeWhyNot_;
  void planValuePipes(const std::vector<const ir::Op *> &ops);
  bool matchValueStream(MmaLoop &L, const ir::Op &dot, size_t w);
  int valueStreamOf(const ir::Op &dot, const MmaLoop **loop) const;
  bool valueStreamLoad(const ir::Op &load) const;
  void lowerValuePipeLoop(const ir::Op &op, const MmaLoop &L);
  // Occupancy (LowerDot.cpp): the largest register demand of the kernel's
  // values-pipeline loops (0: none), turned into `.minnctapersm` at the end.
  int64_t valueLoopDemand(const ir::Op &loop, const MmaLoop *L);
  int64_t liveAcrossLoop(const ir::Op &loop);
  std::vector<const ir::Op *> mmaDotsOverRegisters();
  std::unordered_set<const ir::Op *> mmaDeclined_; // `@` kept off #mma (mmaDotsOverRegisters)
  void finishOccupancy();
  int64_t valueLoopDemand_ = 0;
  bool sharedA_ = true, usedSharedA_ = false; // withoutSharedA, SharedOverflow
  void planValuePipeLoop(const ir::Op &op, const MmaLoop &L, int depth);
  // While a pipelined loop's body is lowered: its plan, chunks, induction
  // variable, state (offsets, whether the trip S - 2 ahead runs, this trip's
  // stage), and once the first streamed `@` issued the copies, the stage's
  // byte offset and the next trip's state.
  struct ValuePipeTrip {
    const MmaLoop *L = nullptr;
    const void *chunks = nullptr; // const StreamChunks *
    llvm::Value *iv = nullptr;
    std::vector<Slots> carried; // the body's arguments (a while: what its condition forwards)
    Slots state, next;
    llvm::Value *stageOff = nullptr;
  };
  ValuePipeTrip pipeTrip_;
  llvm::Value *valuePipeStage();
  bool aheadable(MmaLoop &L, const ir::Value *v, std::unordered_set<const ir::Op *> &ops);
  void withTripAhead(const MmaLoop &L, const std::vector<Slots> &state, llvm::Value *iv,
                     int64_t ahead, const std::function<void()> &f);
  void issueValueCopies(const MmaLoop &L, const StreamChunks &c, const Slots &off,
                        llvm::Value *stage, const std::vector<Slots> &state, llvm::Value *iv,
                        int64_t ahead, llvm::Value *runs = nullptr);
  void issueTripCopies(const MmaLoop &L, const StreamChunks &c, const Slots &off,
                       llvm::Value *stage, const std::vector<Slots> &state, llvm::Value *iv,
                       llvm::Value *runs);
  llvm::Value *streamOffset(const MmaLoop &L, size_t w, llvm::Value *off, int64_t ahead);
  llvm::Value *valuePipeRuns(const MmaLoop &L, const std::vector<Slots> &state, llvm::Value *iv,
                             int64_t ahead);
  Layout mmaValueLayout(const ir::Type &t) const;
  void planMmaValueOp(const ir::Op &op, int depth);
  void planMmaValueLoop(const ir::Op &op, int depth);
  void planMmaValueBlocked(const ir::Op &op, const ir::Value *v, int depth);
  llvm::Value *mmaRowOf(const ir::Type &t, int64_t s);
  llvm::Value *mmaColOf(const ir::Type &t, int64_t s, bool permuted);
  llvm::Value *mmaIndexOf(const ir::Type &t, int64_t s, bool permuted);
  Slots mmaToBlocked(const ir::Type &t, const Slots &s, bool permuted);
  Slots mmaFromBlocked(const ir::Type &t, const Slots &s, bool permuted);
  Slots getMma(const ir::Value *v, bool permuted = false);
  void planKeyPermutation();
  bool keysPermuted(const ir::Value *v) const { return mmaPermuted_.count(v) > 0; }
  void bindValue(const ir::Value *v, Slots s);
  Slots carriedSlots(const ir::Value *v, bool inMma, bool permuted);
  void lowerMmaValueOp(const ir::Op &op);
  void lowerMmaValueReduce(const ir::Op &op);
  void lowerMmaValueDot(const ir::Op &op);
  std::unordered_set<const ir::Value *> mmaRes_;     // values that live in #mma / its row slice
  std::unordered_set<const ir::Op *> mmaOps_;        // ops lowered on them
  std::unordered_set<const ir::Value *> mmaBlocked_; // of those, also needed blocked
  std::unordered_set<const ir::Value *> mmaHoistNoted_; // --emit=layouts: hoisted a already shown
  // Of the #mma values, those whose columns are permuted (option key-perm,
  // planKeyPermutation): slot column 8j + 2t + e of lane 4g + t holds column
  // 2 (n / 8) t + 2j + e, so that a thread's columns are consecutive.
  std::unordered_set<const ir::Value *> mmaPermuted_;
  std::unordered_map<const ir::Value *, Slots> mmaValues_;

  // ---- Module and function set-up -------------------------------------

  void setUpModule() {
    mod_->setTargetTriple("nvptx64-nvidia-cuda");
    mod_->setDataLayout("e-i64:64-i128:128-v16:16-v32:32-n16:32:64");
    mod_->addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t(0));
    std::vector<llvm::Type *> paramTypes;
    for (unsigned i = 0; i < fn_.numParams(); ++i) {
      const ir::Type &t = fn_.param(i)->type();
      paramTypes.push_back(t.isPtr ? se_.regType(t) : se_.memType(t.dtype));
      params_.push_back({fn_.paramName(i), t.dtype, t.isPtr});
    }
    for (size_t j = 0; j < tensorMaps_.size(); ++j) // option tma: CUtensorMaps by value
      paramTypes.push_back(llvm::PointerType::get(ctx_, 0));
    auto *fty = llvm::FunctionType::get(b_.getVoidTy(), paramTypes, false);
    kernel_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, fn_.name(), *mod_);
    llvm::NamedMDNode *ann = mod_->getOrInsertNamedMetadata("nvvm.annotations");
    auto md = [&](const char *key, unsigned v) {
      llvm::Metadata *ops[] = {llvm::ValueAsMetadata::get(kernel_), llvm::MDString::get(ctx_, key),
                               llvm::ConstantAsMetadata::get(b_.getInt32(v))};
      ann->addOperand(llvm::MDNode::get(ctx_, ops));
    };
    md("kernel", 1);
    md("maxntidx", T_);
    if (!tensorMaps_.empty()) {
      // __grid_constant__: the kernel takes each map's address in the
      // parameter space (cvta.param), as cp.async.bulk.tensor wants it.
      std::vector<llvm::Metadata *> idx;
      for (size_t j = 0; j < tensorMaps_.size(); ++j) {
        unsigned i = fn_.numParams() + static_cast<unsigned>(j);
        kernel_->addParamAttr(
            i, llvm::Attribute::getWithByValType(ctx_, llvm::ArrayType::get(b_.getInt8Ty(), 128)));
        kernel_->addParamAttr(i, llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
        kernel_->getArg(i)->setName("tma" + std::to_string(j));
        idx.push_back(llvm::ConstantAsMetadata::get(b_.getInt32(i + 1)));
      }
      llvm::Metadata *ops[] = {llvm::ValueAsMetadata::get(kernel_),
                               llvm::MDString::get(ctx_, "grid_constant"),
                               llvm::MDNode::get(ctx_, idx)};
      ann->addOperand(llvm::MDNode::get(ctx_, ops));
    }
    setUpDebugInfo();
    auto *entry = llvm::BasicBlock::Create(ctx_, "entry", kernel_);
    exit_ = llvm::BasicBlock::Create(ctx_, "exit", kernel_);
    b_.SetInsertPoint(entry);
    tid_ = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {}, nullptr, "tid");
    for (size_t j = 0; j < tensorMaps_.size(); ++j)
      tensorMapArgs_.push_back(b_.CreatePtrToInt(
          kernel_->getArg(fn_.numParams() + static_cast<unsigned>(j)), b_.getInt64Ty()));
    for (unsigned i = 0; i < fn_.numParams(); ++i) {
      const ir::Type &t = fn_.param(i)->type();
      llvm::Argument *a = kernel_->getArg(i);
      a->setName(fn_.paramName(i));
      if (t.isPtr) {
        const ir::ParamAttrs &pa = fn_.paramAttrs(i);
        uint64_t align = pa.aligned > 1 && (pa.aligned & (pa.aligned - 1)) == 0
                             ? static_cast<uint64_t>(pa.aligned)
                             : 1;
        if (opts_.alignedPointers)
          align = std::max<uint64_t>(align, 16);
        if (align > 1)
          kernel_->addParamAttr(i, llvm::Attribute::getWithAlignment(ctx_, llvm::Align(align)));
        values_[fn_.param(i)] = {a};
      } else {
        values_[fn_.param(i)] = {se_.fromMemory(a, t.dtype)};
      }
    }
  }

  void setUpDebugInfo() {
    if (!opts_.lineInfo)
      return;
    std::string file = fn_.loc().file < irModule_.files.size() ? irModule_.files[fn_.loc().file]
                                                              : std::string("kernel.tc");
    di_ = std::make_unique<llvm::DIBuilder>(*mod_);
    diFile_ = di_->createFile(file, ".");
    di_->createCompileUnit(llvm::dwarf::DW_LANG_C, diFile_, "triton-c", true, "", 0, "",
                           llvm::DICompileUnit::DebugDirectivesOnly);
    auto *sty = di_->createSubroutineType(di_->getOrCreateTypeArray({}));
    sp_ = di_->createFunction(diFile_, fn_.name(), fn_.name(), diFile_, fn_.loc().line, sty,
                              fn_.loc().line, llvm::DINode::FlagZero,
                              llvm::DISubprogram::SPFlagDefinition |
                                  llvm::DISubprogram::SPFlagOptimized);
    kernel_->setSubprogram(sp_);
    mod_->addModuleFlag(llvm::Module::Warning, "Debug Info Version",
                        llvm::DEBUG_METADATA_VERSION);
    mod_->addModuleFlag(llvm::Module::Warning, "Dwarf Version", uint32_t(2));
  }

  void setLoc(const ir::Op &op) {
    if (sp_ && op.loc().line)
      b_.SetCurrentDebugLocation(llvm::DILocation::get(ctx_, op.loc().line, op.loc().col, sp_));
  }

  // ---- Layout ------------------------------------------------------------

  /// Slots per thread of a tile of `n` elements (1 for scalars).
  int64_t slotsOf(int64_t n) const { return n >= T_ ? n / T_ : 1; }
  int64_t slotsOf(const ir::Type &t) const { return t.isScalar() ? 1 : slotsOf(t.numElements()); }

  /// Flat element index (i32) held in slot k of this thread for a tile of n.
  llvm::Value *elemIndex(int64_t n, int64_t k) {
    if (n < T_)
      return b_.CreateURem(tid_, b_.getInt32(static_cast<uint32_t>(n)));
    int64_t kk = slotsOf(n), v = std::min<int64_t>(vec_, kk);
    int64_t base = (k / v) * T_ * v + k % v;
    llvm::Value *t = v == 1 ? tid_ : b_.CreateMul(tid_, b_.getInt32(static_cast<uint32_t>(v)));
    return b_.CreateAdd(t, b_.getInt32(static_cast<uint32_t>(base)), "", true, true);
  }

  /// Whether this thread owns the elements it holds of a tile of n (null: all do).
  llvm::Value *ownerOf(int64_t n) {
    if (n >= T_)
      return nullptr;
    if (plantedBug("mask-off-by-one")) return b_.CreateICmpULE(tid_, b_.getInt32(static_cast<uint32_t>(n)));
    return b_.CreateICmpULT(tid_, b_.getInt32(static_cast<uint32_t>(n)));
  }
  llvm::Value *isThread0() { return b_.CreateICmpEQ(tid_, b_.getInt32(0)); }
  /// body for thread 0 alone; the asynchronous events it emits are not every
  /// thread's, so none is noted (checkAsyncSchedule).
  template <typename F> void emitThread0(F body) {
    std::vector<AsyncEvent> *noted = asyncEvents_;
    asyncEvents_ = nullptr;
    emitGuarded(isThread0(), body);
    asyncEvents_ = noted;
  }

  /// Index of axis d of flat index e in a row-major shape.
  llvm::Value *axisIndex(llvm::Value *e, const ir::Shape &s, size_t d) {
    int64_t stride = product(s, d + 1, s.size());
    llvm::Value *q = stride == 1 ? e : b_.CreateUDiv(e, b_.getInt32(static_cast<uint32_t>(stride)));
    return d == 0 ? q : b_.CreateURem(q, b_.getInt32(static_cast<uint32_t>(s[d])));
  }

  // ---- Values ------------------------------------------------------------

  const Slots &get(const ir::Value *v) {
    auto it = values_.find(v);
    if (it == values_.end())
      throw Unsupported("internal: value used before its definition");
    return it->second;
  }
  static llvm::Value *slot(const Slots &s, size_t k) { return s.size() == 1 ? s[0] : s[k]; }

  void checkType(const ir::Type &t) {
    if (slotsOf(t) > kMaxSlotsPerThread)
      throw Unsupported("a tile of " + std::to_string(t.numElements()) + " elements (" +
                        t.str() + ") needs more than " + std::to_string(kMaxSlotsPerThread) +
                        " registers per thread with num_warps=" + std::to_string(opts_.numWarps) +
                        "; use more warps");
  }

  // ---- Control helpers ------------------------------------------------------

  /// Emits `if (cond) body()`; returns the value `body` produced merged with
  /// `otherwise` (or null when body produces none).
  template <typename F>
  llvm::Value *emitGuarded(llvm::Value *cond, F body, llvm::Value *otherwise = nullptr) {
    if (!cond) {
      llvm::Value *v = body();
      return v;
    }
    llvm::BasicBlock *from = b_.GetInsertBlock();
    auto *then = llvm::BasicBlock::Create(ctx_, "guard", kernel_);
    auto *cont = llvm::BasicBlock::Create(ctx_, "guard.end", kernel_);
    b_.CreateCondBr(cond, then, cont);
    b_.SetInsertPoint(then);
    llvm::Value *v = body();
    llvm::BasicBlock *thenEnd = b_.GetInsertBlock();
    b_.CreateBr(cont);
    b_.SetInsertPoint(cont);
    if (!v)
      return nullptr;
    llvm::PHINode *phi = b_.CreatePHI(v->getType(), 2);
    phi->addIncoming(v, thenEnd);
    phi->addIncoming(otherwise ? otherwise : llvm::Constant::getNullValue(v->getType()), from);
    return phi;
  }

  llvm::Value *andOpt(llvm::Value *a, llvm::Value *b) {
    if (!a)
      return b;
    if (!b)
      return a;
    return b_.CreateAnd(a, b);
  }

  // ---- Shared-memory staging -------------------------------------------

  llvm::GlobalVariable *smem() {
    if (!smem_) {
      auto *ty = llvm::ArrayType::get(b_.getInt8Ty(), 0);
      smem_ = new llvm::GlobalVariable(*mod_, ty, false, llvm::GlobalValue::ExternalLinkage,
                                       nullptr, "tc_smem", nullptr,
                                       llvm::GlobalValue::NotThreadLocal, 3);
    }
    return smem_;
  }
  void barrier() {
    noteAsync({AsyncEvent::Kind::Barrier});
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
  }
  /// While a pipelined loop is lowered, its asynchronous events go here (the
  /// prologue's, one trip's, the exit's) for checkAsyncSchedule.
  std::vector<AsyncEvent> *asyncEvents_ = nullptr;
  /// The `if`s and generic loops the builder is in, counted from the
  /// pipelined loop being recorded (StagesClaim resets it): what runs there
  /// may not run at all.
  int condDepth_ = 0;
  struct Conditional {
    explicit Conditional(Lowerer &l) : l_(l) { ++l_.condDepth_; }
    ~Conditional() { --l_.condDepth_; }
    Conditional(const Conditional &) = delete;
    Conditional &operator=(const Conditional &) = delete;
    Lowerer &l_;
  };
  void noteAsync(const AsyncEvent &e) {
    if (!asyncEvents_)
      return;
    if (condDepth_ > 0) {
      using K = AsyncEvent::Kind;
      switch (e.kind) {
      case K::Barrier:
      case K::Fence: return; // it may not run: the check must not count on it
      case K::Read:
      case K::Store: break; // assumed to run: it can only add hazards
      case K::Copy:
      case K::CopyCommit:
      case K::CopyWait:
      case K::CopyWaitAll:
      case K::ReadCommit:
      case K::ReadWait:
      case K::StageWrite:
      case K::TmaInit:
      case K::TmaFill:
      case K::TmaWait:
      case K::TmaInval:
        throw Unsupported("internal: a write into the stages, or a commit, wait or mbarrier "
                          "operation of them, under an `if` or a nested loop of a pipelined "
                          "loop's trip, which the stages' race check cannot model "
                          "(--disable-opt pipeline compiles the loop without stages)");
      }
    }
    asyncEvents_->push_back(e);
  }
  /// cp.async.wait_group `pending`, noted.
  void cpAsyncWait(int64_t pending) {
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {},
                       {b_.getInt32(static_cast<uint32_t>(pending))});
    AsyncEvent wait{AsyncEvent::Kind::CopyWait};
    wait.pending = pending;
    noteAsync(wait);
  }
  /// cp.async.commit_group of the copies just issued: `trips` trips on from
  /// the trip's own (the prologue: trip `trips`), into its stage, when that
  /// trip runs (`always`: in every trip, zero-filled where it does not);
  /// noted.
  void cpAsyncCommit(int64_t trips, bool always = false) {
    AsyncEvent copy{AsyncEvent::Kind::Copy};
    copy.stage = copy.dataTrip = copy.guardTrip = trips;
    copy.always = always;
    noteAsync(copy);
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {});
    noteAsync({AsyncEvent::Kind::CopyCommit});
  }

  size_t elemBytes(const ir::Type &t) const { return t.isPtr ? 8 : byteSize(t.dtype); }
  llvm::Type *memTypeOf(const ir::Type &t) const {
    return t.isPtr ? se_.regType(t.element()) : se_.memType(t.dtype);
  }

  /// Address of element `idx` of a staged array of type t at byte offset `off`.
  /// With padRow > 0 every row of padRow elements is followed by one unused
  /// element, so that reading a column does not hit one bank 32 times.
  llvm::Value *stagedAddr(const ir::Type &t, size_t off, llvm::Value *idx, int64_t padRow = 0) {
    if (padRow > 1)
      idx = b_.CreateAdd(idx, b_.CreateUDiv(idx, b_.getInt32(static_cast<uint32_t>(padRow))));
    llvm::Value *base = smem();
    if (stagingBase_)
      base = b_.CreateInBoundsGEP(b_.getInt8Ty(), base, stagingBase_);
    if (off)
      base = b_.CreateConstInBoundsGEP1_32(b_.getInt8Ty(), base, static_cast<unsigned>(off));
    return b_.CreateInBoundsGEP(memTypeOf(t), base, idx);
  }

  /// Owners write every slot of v (type t) at byte offset off; reserves space.
  void stage(const Slots &v, const ir::Type &t, size_t off, int64_t padRow = 0) {
    int64_t n = t.isScalar() ? 1 : t.numElements();
    int64_t slotsUsed = padRow > 1 ? n + n / padRow : n;
    sharedBytes_ = std::max(sharedBytes_, off + static_cast<size_t>(slotsUsed) * elemBytes(t));
    llvm::Value *own = t.isScalar() ? isThread0() : ownerOf(n);
    emitGuarded(own, [&]() -> llvm::Value * {
      for (int64_t k = 0; k < slotsOf(t); ++k) {
        llvm::Value *val = slot(v, static_cast<size_t>(k));
        if (!t.isPtr)
          val = se_.toMemory(val, t.dtype);
        b_.CreateStore(val, stagedAddr(t, off, t.isScalar() ? b_.getInt32(0) : elemIndex(n, k),
                                       padRow));
      }
      return nullptr;
    });
  }

  llvm::Value *readStaged(const ir::Type &t, size_t off, llvm::Value *idx, int64_t padRow = 0) {
    llvm::Value *v = b_.CreateLoad(memTypeOf(t), stagedAddr(t, off, idx, padRow));
    return t.isPtr ? v : se_.fromMemory(v, t.dtype);
  }

  static size_t alignUp(size_t x) { return (x + 15) & ~size_t(15); }

  // ---- Blocks and ops ----------------------------------------------------

  /// Lowers the ops of `block`; a yield/condition stores its operands in `*yielded`.
  void lowerBlock(const ir::Block &block, std::vector<Slots> *yielded) {
    for (const auto &op : block.ops()) {
      if (b_.GetInsertBlock()->getTerminator())
        return; // after a return
      lowerOp(*op, yielded);
    }
  }

  /// Binds op's result; a single slot is replicated to the type's slot count.
  void define(const ir::Op &op, Slots s) {
    const ir::Type &t = op.result()->type();
    checkType(t);
    size_t n = static_cast<size_t>(slotsOf(t));
    if (s.size() == 1 && n > 1)
      s.assign(n, s[0]);
    values_[op.result()] = std::move(s);
    if (mmaHoistA_.count(op.result()))
      loadHoistedA(op.result());
  }

  void lowerOp(const ir::Op &op, std::vector<Slots> *yielded) {
    if (loweredEarly_.count(&op))
      return; // done by another op's lowering (an mma loop's epilogue cast)
    setLoc(op);
    for (const auto &r : op.results())
      checkType(r->type());
    if (mmaOps_.count(&op))
      return lowerMmaValueOp(op);
    switch (op.kind()) {
    case ir::OpKind::Constant: return lowerConstant(op);
    case ir::OpKind::Range: return lowerRange(op);
    case ir::OpKind::GetProgramId:
    case ir::OpKind::GetNumPrograms: return lowerProgramQuery(op);
    case ir::OpKind::Splat: return define(op, {get(op.operand(0))[0]});
    case ir::OpKind::Broadcast: return lowerBroadcast(op);
    case ir::OpKind::ExpandDims:
    case ir::OpKind::Reshape: return define(op, get(op.operand(0)));
    case ir::OpKind::Trans: return lowerTrans(op);
    case ir::OpKind::ExtractSlice: return lowerExtractSlice(op);
    case ir::OpKind::InsertSlice: return lowerInsertSlice(op);
    case ir::OpKind::Undef: return lowerUndef(op);
    case ir::OpKind::Cast:
    case ir::OpKind::Bitcast: return lowerElementwise(op);
    case ir::OpKind::Neg:
    case ir::OpKind::Not:
    case ir::OpKind::Abs:
    case ir::OpKind::Exp:
    case ir::OpKind::Exp2:
    case ir::OpKind::Log:
    case ir::OpKind::Log2:
    case ir::OpKind::Sqrt:
    case ir::OpKind::Rsqrt:
    case ir::OpKind::Sin:
    case ir::OpKind::Cos:
    case ir::OpKind::Floor:
    case ir::OpKind::Ceil: return lowerElementwise(op);
    case ir::OpKind::Add:
    case ir::OpKind::Sub:
    case ir::OpKind::Mul:
    case ir::OpKind::Div:
    case ir::OpKind::Rem:
    case ir::OpKind::And:
    case ir::OpKind::Or:
    case ir::OpKind::Xor:
    case ir::OpKind::Shl:
    case ir::OpKind::Shr:
    case ir::OpKind::Min:
    case ir::OpKind::Max:
    case ir::OpKind::UMulHi:
    case ir::OpKind::CmpEq:
    case ir::OpKind::CmpNe:
    case ir::OpKind::CmpLt:
    case ir::OpKind::CmpLe:
    case ir::OpKind::CmpGt:
    case ir::OpKind::CmpGe:
    case ir::OpKind::AddPtr: return lowerElementwise(op);
    case ir::OpKind::Fma:
    case ir::OpKind::Select: return lowerElementwise(op);
    case ir::OpKind::Reduce: return lowerReduce(op);
    case ir::OpKind::Dot: return lowerDot(op);
    case ir::OpKind::Load: return lowerLoad(op);
    case ir::OpKind::Store: return lowerStore(op);
    case ir::OpKind::AtomicRMW:
    case ir::OpKind::AtomicCas: return lowerAtomic(op);
    case ir::OpKind::Print: return lowerPrint(op);
    case ir::OpKind::Assert: return lowerAssert(op);
    case ir::OpKind::DebugBarrier: return barrier();
    case ir::OpKind::For: return lowerFor(op);
    case ir::OpKind::If: return lowerIf(op);
    case ir::OpKind::While: return lowerWhile(op);
    case ir::OpKind::Yield:
    case ir::OpKind::Condition: return lowerYield(op, yielded);
    case ir::OpKind::Return: b_.CreateBr(exit_); return;
    }
  }

  void lowerConstant(const ir::Op &op) {
    const ir::Type &t = op.result()->type();
    const ir::AttrValue *v = op.attr("value");
    if (!v || t.isPtr)
      throw Unsupported("internal: malformed constant");
    define(op, {se_.constant(t.dtype, *v)});
  }

  void lowerRange(const ir::Op &op) {
    const ir::Type &t = op.result()->type();
    int64_t start = op.intAttr("start"), n = t.numElements();
    Slots s;
    for (int64_t k = 0; k < slotsOf(n); ++k)
      s.push_back(b_.CreateAdd(elemIndex(n, k), b_.getInt32(static_cast<uint32_t>(start))));
    define(op, s);
  }

  void lowerProgramQuery(const ir::Op &op) {
    int64_t axis = op.intAttr("axis");
    bool id = op.kind() == ir::OpKind::GetProgramId;
    static const llvm::Intrinsic::ID kIds[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                               llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                               llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
    static const llvm::Intrinsic::ID kNums[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x,
                                                llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
                                                llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z};
    if (axis < 0 || axis > 2)
      throw Unsupported("internal: program axis out of range");
    define(op, {b_.CreateIntrinsic(id ? kIds[axis] : kNums[axis], {}, {})});
  }

  /// Gathers: result element e takes operand element src(e) through shared memory.
  template <typename SrcIndex>
  void lowerGather(const ir::Op &op, SrcIndex srcIndex, int64_t padRow = 0) {
    const ir::Type &in = op.operand(0)->type(), &out = op.result()->type();
    const Slots &v = get(op.operand(0));
    if (in.numElements() == 1) { // every thread holds the one element
      define(op, {v[0]});
      return;
    }
    barrier();
    stage(v, in, 0, padRow);
    if (!plantedBug("missing-barrier")) barrier();
    Slots s;
    int64_t n = out.numElements();
    for (int64_t k = 0; k < slotsOf(n); ++k)
      s.push_back(readStaged(in, 0, srcIndex(elemIndex(n, k)), padRow));
    define(op, s);
  }

  void lowerBroadcast(const ir::Op &op) {
    const ir::Shape &in = op.operand(0)->type().shape, &out = op.result()->type().shape;
    if (op.operand(0)->type().isScalar()) {
      define(op, {get(op.operand(0))[0]});
      return;
    }
    if (in == out) {
      define(op, get(op.operand(0)));
      return;
    }
    if (rematerialize(op)) // LowerMemory.cpp: recomputed, not staged
      return;
    lowerGather(op, [&](llvm::Value *e) {
      llvm::Value *src = b_.getInt32(0);
      for (size_t d = 0; d < out.size(); ++d) {
        if (in[d] == 1)
          continue;
        llvm::Value *i = axisIndex(e, out, d);
        int64_t stride = product(in, d + 1, in.size());
        src = b_.CreateAdd(src, b_.CreateMul(i, b_.getInt32(static_cast<uint32_t>(stride))));
      }
      return src;
    });
  }

  void lowerTrans(const ir::Op &op) {
    const ir::Shape &in = op.operand(0)->type().shape, &out = op.result()->type().shape;
    const std::vector<int64_t> &perm = op.intsAttr("perm");
    if (lowerTransFast(op)) // LowerMemory.cpp: a fused load, or recomputed
      return;
    lowerGather(op, [&](llvm::Value *e) {
      llvm::Value *src = b_.getInt32(0);
      for (size_t d = 0; d < out.size(); ++d) { // result axis d is operand axis perm[d]
        llvm::Value *i = axisIndex(e, out, d);
        int64_t stride = product(in, static_cast<size_t>(perm[d]) + 1, in.size());
        src = b_.CreateAdd(src, b_.CreateMul(i, b_.getInt32(static_cast<uint32_t>(stride))));
      }
      return src;
    }, in.size() >= 2 ? in.back() : 0); // reads walk columns: pad the rows
  }

  /// One element of an elementwise op from one element of each operand.
  llvm::Value *scalarOp(const ir::Op &op, const Slots &x) {
    const ir::Type &in = op.operand(0)->type(), &out = op.result()->type();
    // (Not a switch: every other op kind is handled below, and switches over
    // OpKind list every op.)
    ir::OpKind k = op.kind();
    if (k == ir::OpKind::Cast || k == ir::OpKind::Bitcast) {
      if (in.isPtr && out.isPtr)
        return x[0];
      if (in.isPtr)
        return se_.cast(b_.CreatePtrToInt(x[0], b_.getInt64Ty()), DType::U64, out.dtype);
      if (out.isPtr)
        return b_.CreateIntToPtr(se_.cast(x[0], in.dtype, DType::U64), se_.regType(out));
      return k == ir::OpKind::Cast ? se_.cast(x[0], in.dtype, out.dtype)
                                   : se_.bitcast(x[0], in.dtype, out.dtype);
    }
    if (k == ir::OpKind::AddPtr) {
      DType ot = op.operand(1)->type().dtype;
      llvm::Value *off = isSignedInt(ot) ? b_.CreateSExtOrTrunc(x[1], b_.getInt64Ty())
                                         : b_.CreateZExtOrTrunc(x[1], b_.getInt64Ty());
      return b_.CreateGEP(se_.memType(in.dtype), x[0], off);
    }
    if (k == ir::OpKind::Select)
      return b_.CreateSelect(x[0], x[1], x[2]);
    if (k == ir::OpKind::Fma)
      return se_.fma(in.dtype, x[0], x[1], x[2]);
    if (k == ir::OpKind::Exp2 && opts_.exp2Range && in.dtype != DType::F64 &&
        notBelowMinus126(op.operand(0))) {
      notePath("exp2.range"); // option exp2-range
      return se_.exp2Normal(in.dtype, x[0]);
    }
    return x.size() == 1 ? se_.unary(op.kind(), in.dtype, x[0])
                         : se_.binary(op.kind(), in.dtype, x[0], x[1]);
  }

  /// Elementwise ops: one scalarOp per slot (a scalar operand serves every slot).
  void lowerElementwise(const ir::Op &op) {
    size_t n = static_cast<size_t>(slotsOf(op.result()->type()));
    Slots s;
    for (size_t k = 0; k < n; ++k) {
      Slots x;
      for (const ir::Value *v : op.operands())
        x.push_back(slot(get(v), k));
      s.push_back(scalarOp(op, x));
    }
    define(op, s);
  }

  // ---- reduce and dot ----------------------------------------------------

  /// The accumulator dtype of `+` over t (docs/semantics.md section 10).
  static DType addAccumulator(DType t) {
    switch (t) {
    case DType::Bool:
    case DType::U8:
    case DType::U16: return DType::U32;
    case DType::I8:
    case DType::I16: return DType::I32;
    case DType::F16:
    case DType::BF16: return DType::F32;
    case DType::I32:
    case DType::I64:
    case DType::U32:
    case DType::U64:
    case DType::F32:
    case DType::F64: return t;
    }
    return t;
  }

  /// Runs body(q) for q = start, start + stride, ... < total (a run-time loop).
  template <typename F>
  void stridedLoop(const char *name, llvm::Value *start, int64_t stride, int64_t total, F body) {
    std::string n = name;
    llvm::BasicBlock *pre = b_.GetInsertBlock();
    auto *cond = llvm::BasicBlock::Create(ctx_, n + ".cond", kernel_);
    auto *loop = llvm::BasicBlock::Create(ctx_, n + ".body", kernel_);
    auto *done = llvm::BasicBlock::Create(ctx_, n + ".end", kernel_);
    b_.CreateBr(cond);
    b_.SetInsertPoint(cond);
    llvm::PHINode *q = b_.CreatePHI(b_.getInt32Ty(), 2);
    q->addIncoming(start, pre);
    b_.CreateCondBr(b_.CreateICmpULT(q, b_.getInt32(static_cast<uint32_t>(total))), loop, done);
    b_.SetInsertPoint(loop);
    body(static_cast<llvm::Value *>(q));
    q->addIncoming(b_.CreateAdd(q, b_.getInt32(static_cast<uint32_t>(stride))),
                   b_.GetInsertBlock());
    b_.CreateBr(cond);
    b_.SetInsertPoint(done);
  }

  /// Runs body(q) for q = tid, tid + T, ... < total (a run-time loop).
  template <typename F> void forEachAssigned(int64_t total, F body) {
    stridedLoop("each", tid_, T_, total, body);
  }

  /// One combine step of a reduction: (value, index) of left and right -> result.
  std::pair<llvm::Value *, llvm::Value *> combine(const std::string &kind, DType t,
                                                  llvm::Value *a, llvm::Value *ai, llvm::Value *c,
                                                  llvm::Value *ci) {
    if (kind == "argmax" || kind == "argmin") {
      // The right one wins only if strictly better, or if the left is NaN and it
      // is not: the smallest index of the best non-NaN value, as the scan.
      llvm::Value *take =
          se_.binary(kind == "argmax" ? ir::OpKind::CmpGt : ir::OpKind::CmpLt, t, c, a);
      if (plantedBug("argmax-tie")) take = se_.binary(kind == "argmax" ? ir::OpKind::CmpGe : ir::OpKind::CmpLe, t, c, a);
      if (isFloat(t))
        take = b_.CreateOr(take, b_.CreateAnd(b_.CreateFCmpUNO(a, a), b_.CreateFCmpORD(c, c)));
      return {b_.CreateSelect(take, c, a), b_.CreateSelect(take, ci, ai)};
    }
    ir::OpKind k = kind == "add"   ? ir::OpKind::Add
                   : kind == "max" ? ir::OpKind::Max
                   : kind == "min" ? ir::OpKind::Min
                   : kind == "and" ? ir::OpKind::And
                   : kind == "or"  ? ir::OpKind::Or
                   : kind == "xor" ? ir::OpKind::Xor
                                   : throw Unsupported("reduce kind '" + kind + "'");
    return {se_.binary(k, t, a, c), nullptr};
  }

  // ---- reduce (LowerReduce.cpp)
  // The reference's pairwise tree: the levels whose operands are in one
  // thread combine in registers, those across the lanes of a warp through
  // shfl.sync.bfly, the rest through shared memory.
  struct ReduceSpec;
  void lowerReduce(const ir::Op &op);
  llvm::Value *shuffleXor(llvm::Value *v, uint32_t mask);
  void reduceSlotPairs(const ReduceSpec &r, Slots &val, Slots &idx, int s);
  void reduceLanePairs(const ReduceSpec &r, Slots &val, Slots &idx, int l);
  uint64_t reduceInWarp(const ReduceSpec &r, Slots &val, Slots &idx, uint32_t &laneMask);
  std::pair<int, int> reduceLevelsInWarp(int64_t n, int64_t inner, int64_t len,
                                         bool anyOrder) const;
  void stagePartials(const ReduceSpec &r, const Slots &val, const Slots &idx, uint64_t reduced,
                     uint32_t laneMask, size_t off, size_t ioff);
  int reduceLevelsShared(const ReduceSpec &r, int64_t len2, const size_t buf[2],
                         const size_t ibuf[2]);
  llvm::Value *stagedPos(const ReduceSpec &r, int64_t len2, llvm::Value *o, llvm::Value *p,
                         llvm::Value *j);
  std::pair<llvm::Value *, llvm::Value *> readReduced(const ReduceSpec &r, int64_t len2, bool fold,
                                                      size_t off, size_t ioff, llvm::Value *o,
                                                      llvm::Value *j);

  // ---- dot (LowerDot.cpp)
  // `@`: on tensor cores (mma.sync, operands through ldmatrix from padded
  // shared memory) where the dtypes and shapes allow it and
  // Options::tensorCores is on, else the reference-order loop on CUDA cores.
  struct MmaPlan;
  struct MmaTile;
  void lowerDot(const ir::Op &op);
  void lowerDotFma(const ir::Op &op);
  bool lowerDotMma(const ir::Op &op);
  bool planMma(const ir::Op &op, MmaPlan &p);
  MmaTile mmaTileAt(const MmaPlan &p, llvm::Value *tile, llvm::Value *lane);
  void allowAllRegisters();
  void setMinCtasPerSm(unsigned ctas);
  void mmaTileLoop(const MmaPlan &p);
  llvm::Value *paddedIndex(llvm::Value *e, int64_t rowLen, int64_t pitch, bool transposed);
  void stageRows(const Slots &v, const ir::Type &t, size_t off, int64_t pitch, bool transposed);
  Slots readRows(const ir::Type &t, size_t off, int64_t pitch);
  llvm::Value *rowSlotIndex(int64_t n, int64_t k, int64_t rowLen, int64_t pitch, bool transposed,
                            llvm::Value *&run);
  void mmaWarpTile(const MmaPlan &p, llvm::Value *tile, llvm::Value *lane);
  Slots mmaLoadAcc(const MmaPlan &p, const MmaTile &t);
  void mmaStoreAcc(const MmaPlan &p, const MmaTile &t, const Slots &acc,
                   const ir::Type *staged = nullptr);
  Slots mmaKLoop(const MmaPlan &p, const MmaTile &t, Slots acc);
  void mmaKStep(const MmaPlan &p, const MmaTile &t, llvm::Value *k0, Slots &acc);
  Slots mmaSync(const MmaPlan &p, const Slots &a, llvm::Value *b0, llvm::Value *b1, const Slots &c);
  Slots ldmatrix(const ir::Type &t, size_t off, llvm::Value *idx, bool trans);

  // ---- Matmul loops (LowerMmaLoop.cpp) ----
  bool lowerMmaLoop(const ir::Op &loop);
  unsigned mmaLoopCtas(const MmaLoop &L) const;
  bool matchMmaLoop(const ir::Op &loop, MmaLoop &L);
  void matchStreams(MmaLoop &L);
  bool matchStream(MmaLoop &L, size_t which);
  bool streamMasksAhead(MmaLoop &L);
  bool predictable(MmaLoop &L);
  bool invariantIn(const ir::Value *v, MmaLoop &L);
  bool usedOnlyBy(const ir::Value *v, const ir::Op *user) const;
  std::vector<Slots> predictedState(const MmaLoop &L, const std::vector<Slots> &state,
                                    llvm::Value *iv, int64_t ahead, llvm::Value *&ivAhead);
  llvm::Value *predictedCond(const MmaLoop &L, const std::vector<Slots> &state, llvm::Value *iv);
  llvm::Value *pipeBase();
  /// Runs f with stagedAddr adding `bytes` (a matmul loop's region or stage).
  template <typename F> void withStagingBase(llvm::Value *bytes, F f) {
    stagingBase_ = bytes;
    f();
    stagingBase_ = nullptr;
  }
  StreamChunks streamSources(const MmaLoop &L);
  llvm::Value *offsetAhead(const MmaLoop &L, size_t which, llvm::Value *off, int64_t ahead);
  Slots mmaLoopStep(const MmaLoop &L, llvm::Value *stageOff, const Slots &acc);
  bool planWgmma(MmaLoop &L);
  void unpipeline(MmaLoop &L);
  llvm::Value *swizzledChunk(const MmaLoop &L, size_t which, llvm::Value *row,
                             llvm::Value *colBytes);
  llvm::Value *rawChunk(const MmaLoop &L, size_t which, llvm::Value *row, llvm::Value *colBytes);
  void transposeStageB(const MmaLoop &L, llvm::Value *stageOff);
  Slots wgmmaLoopStep(const MmaLoop &L, llvm::Value *stageOff, const Slots &acc);
  Slots wgmmaWait(int64_t pending, const Slots &acc);
  llvm::Value *stageAddressField(llvm::Value *stageOff);
  llvm::Value *wgmmaDescriptor(llvm::Value *field, uint64_t bits, llvm::Value *offset);
  llvm::Value *warpgroupIndex();
  Slots wgmmaFence(const Slots &regs);
  void wgmmaInto(llvm::InlineAsm *mma, const std::vector<llvm::Value *> &args, Slots &out,
                 int64_t at, int64_t per);
  Slots wgmmaValueDot(const MmaPlan &p, const MmaLoop &L, size_t which, llvm::Value *stageOff,
                      const std::vector<std::vector<Slots>> &aFr, const Slots &acc);
  bool planValueWgmma(MmaLoop &L);
  void asmStatement(const std::string &text);
  Slots stagedLoopStep(const MmaLoop &L, const Slots &acc);
  Slots pipelinedLoopStep(const MmaLoop &L, const StreamChunks &c, const std::vector<Slots> &state,
                          llvm::Value *iv, const Slots &loopState, Slots &nextState);
  Slots accToFragments(const MmaLoop &L, const ir::Value *init);
  Slots fragmentsToRows(const MmaLoop &L, const Slots &acc);
  const ir::Op *narrowingAccCast(const MmaLoop &L) const;
  template <typename F> void forEachOwnTile(const MmaLoop &L, F f);
  // Option tma (LowerTma.cpp): stages filled by the Tensor Memory Accelerator.
  void planTma(MmaLoop &L);
  void registerTensorMaps(MmaLoop &L);
  std::optional<TmaCoef> tmaScalar(const ir::Value *v) const;
  std::optional<TmaCoef> tmaUniform(const ir::Value *v) const;
  std::optional<std::vector<TmaCoef>> tmaIndexForm(const ir::Value *v) const;
  bool tmaPointerForm(const ir::Value *v, unsigned &param, std::vector<TmaCoef> &axes,
                      std::vector<TmaNarrow> &narrow) const;
  /// What a TMA loop computes before its prologue (uniform values).
  struct TmaRun {
    std::array<llvm::Value *, 2> ld{}, off0{}, dr{}, dc{}; // i64, elements
    llvm::Value *ok = nullptr; // the maps can address the tiles (but for the trip's checks)
  };
  TmaRun tma_;
  void tmaPrepare(const MmaLoop &L);
  std::array<llvm::Value *, 2> tmaSplit(llvm::Value *off, llvm::Value *ld);
  Slots tmaAdvance(const Slots &rowCol);
  llvm::Value *pipeAddress(llvm::Value *off);
  llvm::Value *mbarAddress(const MmaLoop &L, llvm::Value *stage);
  void asmCall(const std::string &text, const std::string &constraints,
               const std::vector<llvm::Value *> &args);
  void tmaInitBarriers(const MmaLoop &L);
  void tmaInvalBarriers(const MmaLoop &L);
  void tmaWait(const MmaLoop &L, llvm::Value *stage, llvm::Value *phase);
  void tmaFill(const MmaLoop &L, llvm::Value *stage, int64_t trips, const Slots &rowCol,
               const Slots &off);
  std::vector<TensorMapParam> tensorMaps_;
  std::vector<llvm::Value *> tensorMapArgs_; // each map's generic address (i64)
  // ---- end dot

  // ---- Memory --------------------------------------------------------------

  void lowerLoad(const ir::Op &op) {
    if (lowerLoadFast(op)) // LowerMemory.cpp: vectorised, coalesced or fused into a trans
      return;
    const ir::Type &pt = op.operand(0)->type();
    const Slots &p = get(op.operand(0));
    const Slots *mask = op.numOperands() > 1 ? &get(op.operand(1)) : nullptr;
    const Slots *other = op.numOperands() > 2 ? &get(op.operand(2)) : nullptr;
    Slots s;
    for (size_t k = 0; k < p.size(); ++k)
      s.push_back(loadLane(pt.dtype, p[k], mask ? slot(*mask, k) : nullptr,
                           other ? slot(*other, k) : nullptr));
    define(op, s);
  }

  /// One element of a load at ptr: skipped where mask is false, which gives
  /// `other` (0 when null).
  llvm::Value *loadLane(DType dt, llvm::Value *ptr, llvm::Value *mask, llvm::Value *other) {
      llvm::Value *fallback = other;
      if (plantedBug("dropped-fallback")) fallback = nullptr;
    return emitGuarded(
        mask,
        [&]() -> llvm::Value * {
          return se_.fromMemory(
              b_.CreateAlignedLoad(se_.memType(dt), ptr, llvm::Align(byteSize(dt))), dt);
        },
        fallback);
  }

  void lowerStore(const ir::Op &op) {
    std::vector<int64_t> repeats = repeatedAddresses(op); // LowerMemory.cpp
    if (repeats.empty() && lowerStoreFast(op)) // LowerMemory.cpp: vectorised or coalesced
      return;
    const ir::Type &pt = op.operand(0)->type();
    const Slots &p = get(op.operand(0)), &v = get(op.operand(1));
    const Slots *mask = op.numOperands() > 2 ? &get(op.operand(2)) : nullptr;
    llvm::Value *own = pt.isScalar() ? isThread0() : ownerOf(pt.numElements());
    for (size_t k = 0; k < p.size(); ++k) {
      llvm::Value *last = repeats.empty() ? nullptr : lastOfRepeats(pt.shape, repeats, k);
      storeLane(pt.dtype, p[k], slot(v, k),
                andOpt(andOpt(own, mask ? slot(*mask, k) : nullptr), last));
    }
  }

  /// One element of a store, done where `guard` (null: always) holds.
  void storeLane(DType dt, llvm::Value *ptr, llvm::Value *val, llvm::Value *guard) {
    emitGuarded(guard, [&]() -> llvm::Value * {
      b_.CreateAlignedStore(se_.toMemory(val, dt), ptr, llvm::Align(byteSize(dt)));
      return nullptr;
    });
  }

  // ---- Memory-access optimisations (LowerMemory.cpp, docs/gpu-perf.md) -----

  /// How one access is split into runs of consecutive slots: `run` slots
  /// (1: element by element) whose addresses are consecutive, `aligned` when
  /// every run's first address is known to be a multiple of its bytes, and
  /// `maskUniform` when the mask is known to be the same over every run.
  struct AccessPlan {
    int64_t run = 1;
    bool aligned = false;
    bool maskUniform = false;
  };
  using RematMemo = std::map<std::pair<const ir::Value *, Slots>, llvm::Value *>;

  void analyseAccesses();
  const ir::Value *constantOffsetBase(const ir::Value *ptr, int64_t &c);
  bool fusesIntoTrans(const ir::Op &load);
  bool lowerLoadFast(const ir::Op &op);
  bool lowerStoreFast(const ir::Op &op);
  std::vector<int64_t> repeatedAddresses(const ir::Op &store);
  llvm::Value *lastOfRepeats(const ir::Shape &s, const std::vector<int64_t> &repeats, size_t k);
  bool lowerTransFast(const ir::Op &op);

  // LowerSlice.cpp: a[i, :, :] reads and writes, undef.
  bool sliceIsLocal(int64_t whole, int64_t slice, int64_t inner) const;
  llvm::Value *sliceIndexIs(const ir::Op &op, int64_t i);
  llvm::Value *sliceIndexClamped(const ir::Op &op, int64_t dim);
  void lowerExtractSlice(const ir::Op &op);
  void lowerInsertSlice(const ir::Op &op);
  void lowerUndef(const ir::Op &op);
  bool rematerialize(const ir::Op &op);
  bool rematable(const ir::Value *v);
  const ir::Value *steppedInit(const ir::Value *v) const;
  llvm::Value *rematAt(const ir::Value *v, const Slots &coords, RematMemo &memo);
  Slots rematSlots(const ir::Value *v, const ir::Shape &layout, const std::vector<int64_t> &perm);
  Slots coordsIn(const ir::Shape &s, const std::vector<int64_t> &perm, int64_t k);
  llvm::Value *flatIndex(const ir::Shape &s, const Slots &coords);
  std::optional<std::vector<int64_t>> coalescingPerm(const ir::Value *ptr, const ir::Value *mask,
                                                     const ir::Value *other);
  AccessPlan planAccess(const ir::Value *ptr, const ir::Value *mask, const ir::Shape &layout,
                        size_t axis);
  Slots loadPermuted(const ir::Op &op, const std::vector<int64_t> &perm);
  Slots emitLoads(DType dt, const Slots &p, const Slots *mask, const Slots *other,
                  const AccessPlan &plan);
  Slots loadRun(DType dt, const Slots &p, const Slots *mask, const Slots *other, size_t k0,
                const AccessPlan &plan);
  llvm::Value *vectorLoadAsm(llvm::Value *ptr, unsigned words);
  llvm::Value *runLane(DType dt, const Slots &p, size_t k0, size_t k);
  void emitStores(DType dt, const Slots &p, const Slots &v, const Slots *mask, llvm::Value *own,
                  const AccessPlan &plan);
  void storeRun(DType dt, const Slots &p, const Slots &v, const Slots *mask, llvm::Value *own,
                size_t k0, const AccessPlan &plan);
  llvm::Value *runCheck(const Slots &p, const Slots *mask, size_t k0, const AccessPlan &plan,
                        unsigned bytes);
  Slots exchange(const Slots &s, const ir::Type &t, const std::vector<int64_t> &perm,
                 bool toPermuted);
  template <typename A, typename B> Slots emitChoice(llvm::Value *cond, A thenArm, B elseArm);

  llvm::AtomicRMWInst::BinOp rmwOp(const std::string &kind, DType t) {
    bool f = isFloat(t), sgn = isSignedInt(t);
    if (plantedBug("atomic-max-unsigned")) sgn = false;
    if (kind == "add")
      return f ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add;
    if (kind == "max")
      return f ? llvm::AtomicRMWInst::FMax : sgn ? llvm::AtomicRMWInst::Max : llvm::AtomicRMWInst::UMax;
    if (kind == "min")
      return f ? llvm::AtomicRMWInst::FMin : sgn ? llvm::AtomicRMWInst::Min : llvm::AtomicRMWInst::UMin;
    if (kind == "xchg")
      return llvm::AtomicRMWInst::Xchg;
    if (!f && kind == "and")
      return llvm::AtomicRMWInst::And;
    if (!f && kind == "or")
      return llvm::AtomicRMWInst::Or;
    if (!f && kind == "xor")
      return llvm::AtomicRMWInst::Xor;
    throw Unsupported("atomic '" + kind + "' on " + std::string(irName(t)));
  }

  /// Whether an 8- or 16-bit atomicrmw `op` is written here as a loop of 32-bit
  /// compare-and-swaps instead of being left to LLVM. LLVM 19's AtomicExpand
  /// builds its partword loop with an IR folder that simplifies the loop's
  /// value phi before the phi is complete: when the element's offset in its
  /// 32-bit word is provably 0 (a 4-byte-aligned address: the buffer's first
  /// element, any even int16 index), the old element is read from the loop's
  /// first load in every trip, so a retry after another thread's update writes
  /// a stale min/max over it (an update lost; fuzz seed 2026120509, kernel
  /// 3311, int16 atomic_min). And/or/xor are single 32-bit atomics (no loop);
  /// fadd is native for f16 (sm_70) and bf16 (sm_90).
  bool ownPartwordLoop(llvm::AtomicRMWInst::BinOp op, DType t) const {
    using B = llvm::AtomicRMWInst;
    if ((isBool(t) ? 8 : bitWidth(t)) >= 32 || op == B::And || op == B::Or || op == B::Xor)
      return false;
    if (op == B::FAdd)
      return t == DType::BF16 && opts_.sm < 90;
    return true;
  }

  /// An 8- or 16-bit atomicrmw as a compare-and-swap loop on its 32-bit word
  /// (`ownPartwordLoop`); returns the old element (memory type). The new value
  /// is LLVM's own for the operation (buildAtomicRMWValue: maxnum/minnum for
  /// fmax/fmin), so only the loop differs from what AtomicExpand means to build.
  llvm::Value *partwordAtomic(llvm::AtomicRMWInst::BinOp op, llvm::Value *ptr, llvm::Value *val) {
    auto order = llvm::AtomicOrdering::Monotonic;
    llvm::Type *vt = val->getType(), *i32 = b_.getInt32Ty(), *i64 = b_.getInt64Ty();
    unsigned bits = vt->getPrimitiveSizeInBits().getFixedValue();
    llvm::Type *it = b_.getIntNTy(bits);
    llvm::Value *addr = b_.CreatePtrToInt(ptr, i64);
    llvm::Value *word = b_.CreateIntrinsic(llvm::Intrinsic::ptrmask, {ptr->getType(), i64},
                                           {ptr, b_.getInt64(~uint64_t{3})});
    llvm::Value *shift = b_.CreateShl(b_.CreateTrunc(b_.CreateAnd(addr, 3), i32), 3);
    llvm::Value *keep = b_.CreateNot(b_.CreateShl(b_.getInt32((1u << bits) - 1), shift));
    llvm::LoadInst *first = b_.CreateAlignedLoad(i32, word, llvm::Align(4));
    first->setAtomic(order); // a strong load: it races with the other lanes' swaps
    llvm::BasicBlock *entry = b_.GetInsertBlock();
    auto *loop = llvm::BasicBlock::Create(ctx_, "partword.loop", kernel_);
    auto *done = llvm::BasicBlock::Create(ctx_, "partword.done", kernel_);
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode *word0 = b_.CreatePHI(i32, 2);
    word0->addIncoming(first, entry);
    // (The planted bug is LLVM 19's: the element taken from the first load in
    // every trip, here at any offset and in any context.)
    llvm::Value *source =
        plantedBug("atomic-partword-stale") ? static_cast<llvm::Value *>(first) : word0;
    llvm::Value *old = b_.CreateBitCast(b_.CreateTrunc(b_.CreateLShr(source, shift), it), vt);
    llvm::Value *nv = llvm::buildAtomicRMWValue(op, b_, old, val);
    llvm::Value *nvBits = b_.CreateZExt(b_.CreateBitCast(nv, it), i32);
    llvm::Value *word1 = b_.CreateOr(b_.CreateAnd(word0, keep), b_.CreateShl(nvBits, shift));
    llvm::Value *pair = b_.CreateAtomicCmpXchg(word, word0, word1, llvm::Align(4), order, order);
    word0->addIncoming(b_.CreateExtractValue(pair, 0), b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateExtractValue(pair, 1), done, loop);
    b_.SetInsertPoint(done);
    return old;
  }

  /// One lane of an atomic; returns the old value (register type).
  llvm::Value *atomicLane(const ir::Op &op, DType t, llvm::Value *ptr, llvm::Value *cmp,
                          llvm::Value *val) {
    auto align = llvm::Align(byteSize(t));
    auto order = llvm::AtomicOrdering::Monotonic;
    if (op.kind() == ir::OpKind::AtomicRMW) {
      llvm::AtomicRMWInst::BinOp rmw = rmwOp(op.strAttr("kind"), t);
      llvm::Value *mv = se_.toMemory(val, t);
      bool own = ownPartwordLoop(rmw, t);
      if (own)
        notePath("atomic.partword");
      llvm::Value *old = own ? partwordAtomic(rmw, ptr, mv)
                             : b_.CreateAtomicRMW(rmw, ptr, mv, align, order);
      if (plantedBug("atomic-old-value")) return val;
      return se_.fromMemory(old, t);
    }
    // Compare bits: floats as integers of their width.
    llvm::Type *it = b_.getIntNTy(isBool(t) ? 8 : bitWidth(t));
    llvm::Value *c = b_.CreateBitCast(se_.toMemory(cmp, t), it);
    llvm::Value *nv = b_.CreateBitCast(se_.toMemory(val, t), it);
    llvm::Value *pair = b_.CreateAtomicCmpXchg(ptr, c, nv, align, order, order);
    llvm::Value *old = b_.CreateBitCast(b_.CreateExtractValue(pair, 0), se_.memType(t));
    return se_.fromMemory(old, t);
  }

  void lowerAtomic(const ir::Op &op) {
    bool cas = op.kind() == ir::OpKind::AtomicCas;
    const ir::Type &pt = op.operand(0)->type();
    const Slots &p = get(op.operand(0));
    const Slots *cmp = cas ? &get(op.operand(1)) : nullptr;
    const Slots &v = get(op.operand(cas ? 2 : 1));
    size_t maskIdx = cas ? 3 : 2;
    const Slots *mask = op.numOperands() > maskIdx ? &get(op.operand(maskIdx)) : nullptr;
    llvm::Value *own = pt.isScalar() ? isThread0() : ownerOf(pt.numElements());
    // Acquire-release at device scope (docs/semantics.md section 14). LLVM 19's
    // NVPTX cannot select acquire/release fences, so the PTX fence is written out.
    // A scalar atomic is one operation of the whole program, done by thread 0:
    // every thread's earlier accesses are fenced and joined by a barrier before
    // it (release: a lock released by thread 0 covers the other threads' stores),
    // and every thread fences after the barrier that shares the old value
    // (acquire: loads after taking a lock see what its previous holder wrote).
    notePath(cas ? "atomic.cas" : "atomic." + op.strAttr("kind"));
    fenceGpu();
    if (pt.isScalar())
      barrier();
    Slots s;
    for (size_t k = 0; k < p.size(); ++k) {
      llvm::Value *guard = andOpt(own, mask ? slot(*mask, k) : nullptr);
      s.push_back(emitGuarded(guard, [&]() -> llvm::Value * {
        return atomicLane(op, pt.dtype, p[k], cmp ? slot(*cmp, k) : nullptr, slot(v, k));
      }));
    }
    if (pt.isScalar()) { // thread 0 did it: share the old value
      ir::Type st = ir::Type::scalar(pt.dtype);
      stage(s, st, 0);
      barrier();
      fenceGpu();
      s = {readStaged(st, 0, b_.getInt32(0))};
      define(op, s);
      return;
    }
    fenceGpu();
    define(op, s);
  }

  void fenceGpu() {
    auto *asmFn = llvm::InlineAsm::get(llvm::FunctionType::get(b_.getVoidTy(), false),
                                       "fence.acq_rel.gpu;", "~{memory}", true);
    b_.CreateCall(asmFn, {});
  }

  // ---- Debugging -----------------------------------------------------------

  llvm::Value *globalString(const std::string &text) {
    llvm::Constant *init = llvm::ConstantDataArray::getString(ctx_, text);
    auto *g = new llvm::GlobalVariable(*mod_, init->getType(), true,
                                       llvm::GlobalValue::PrivateLinkage, init, ".str", nullptr,
                                       llvm::GlobalValue::NotThreadLocal, 1);
    return b_.CreateAddrSpaceCast(g, b_.getPtrTy());
  }

  llvm::FunctionCallee vprintf() {
    return mod_->getOrInsertFunction(
        "vprintf", llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy(), b_.getPtrTy()}, false));
  }

  /// printf format and the promoted value of one element of dtype t.
  std::pair<std::string, llvm::Value *> printArg(const ir::Type &t, llvm::Value *v) {
    if (t.isPtr)
      return {"0x%llx", b_.CreatePtrToInt(v, b_.getInt64Ty())};
    switch (t.dtype) {
    case DType::Bool: return {"%d", b_.CreateZExt(v, b_.getInt32Ty())};
    case DType::I8:
    case DType::I16: return {"%d", b_.CreateSExt(v, b_.getInt32Ty())};
    case DType::I32: return {"%d", v};
    case DType::U8:
    case DType::U16: return {"%u", b_.CreateZExt(v, b_.getInt32Ty())};
    case DType::U32: return {"%u", v};
    case DType::I64: return {"%lld", v};
    case DType::U64: return {"%llu", v};
    case DType::F16: return {"%.5g", se_.cast(v, DType::F16, DType::F64)};
    case DType::BF16: return {"%.4g", se_.cast(v, DType::BF16, DType::F64)};
    case DType::F32: return {"%.9g", se_.cast(v, DType::F32, DType::F64)};
    case DType::F64: return {"%.17g", v};
    }
    return {"?", v};
  }

  void callPrintf(const std::string &fmt, const Slots &args) {
    llvm::Value *buf = llvm::ConstantPointerNull::get(b_.getPtrTy());
    if (!args.empty()) {
      std::vector<llvm::Type *> tys;
      for (llvm::Value *a : args)
        tys.push_back(a->getType());
      auto *st = llvm::StructType::get(ctx_, tys);
      llvm::IRBuilder<> entryB(&kernel_->getEntryBlock(), kernel_->getEntryBlock().begin());
      llvm::Value *mem = entryB.CreateAlloca(st);
      for (size_t i = 0; i < args.size(); ++i)
        b_.CreateStore(args[i], b_.CreateStructGEP(st, mem, static_cast<unsigned>(i)));
      buf = mem;
    }
    b_.CreateCall(vprintf(), {globalString(fmt), buf});
  }

  /// print: thread 0 writes one line per element,
  /// `[program (x, y, z)] label[i, j] = v` (scalars: `label = v`).
  void lowerPrint(const ir::Op &op) {
    const std::string &label = op.strAttr("label");
    Slots pid;
    for (auto id : {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                    llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                    llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z})
      pid.push_back(b_.CreateIntrinsic(id, {}, {}));
    // The label is text, not format: each `%` doubled (a label "v%d" printed
    // the index as the value; "50%s" made vprintf read a number as a string).
    std::string text;
    for (char c : label)
      text += c == '%' ? std::string("%%") : std::string(1, c);
    std::string head = "[program (%u, %u, %u)] " + text;
    if (op.numOperands() == 0) {
      emitThread0([&]() -> llvm::Value * {
        callPrintf(head + "\n", pid);
        return nullptr;
      });
      return;
    }
    for (const ir::Value *val : op.operands()) {
      const ir::Type &t = val->type();
      if (t.isScalar()) {
        emitThread0([&]() -> llvm::Value * {
          auto [fmt, x] = printArg(t, get(val)[0]);
          Slots args = pid;
          args.push_back(x);
          callPrintf(head + " = " + fmt + "\n", args);
          return nullptr;
        });
        continue;
      }
      barrier();
      stage(get(val), t, 0);
      barrier();
      emitThread0([&]() -> llvm::Value * {
        printTileLoop(t, head, pid);
        return nullptr;
      });
    }
  }

  /// A run-time loop over the staged elements of t (thread 0 only).
  void printTileLoop(const ir::Type &t, const std::string &head, const Slots &pid) {
    llvm::BasicBlock *pre = b_.GetInsertBlock();
    auto *loop = llvm::BasicBlock::Create(ctx_, "print.loop", kernel_);
    auto *done = llvm::BasicBlock::Create(ctx_, "print.done", kernel_);
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode *i = b_.CreatePHI(b_.getInt32Ty(), 2);
    i->addIncoming(b_.getInt32(0), pre);
    std::string fmt = head + "[";
    Slots args = pid;
    for (size_t d = 0; d < t.rank(); ++d) {
      fmt += d ? ", %u" : "%u";
      args.push_back(axisIndex(i, t.shape, d));
    }
    auto [vf, x] = printArg(t, readStaged(t, 0, i));
    args.push_back(x);
    callPrintf(fmt + "] = " + vf + "\n", args);
    llvm::Value *next = b_.CreateAdd(i, b_.getInt32(1));
    i->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpULT(next, b_.getInt32(static_cast<uint32_t>(t.numElements()))),
                    loop, done);
    b_.SetInsertPoint(done);
  }

  void lowerAssert(const ir::Op &op) {
    const ir::Type &t = op.operand(0)->type();
    const Slots &c = get(op.operand(0));
    const std::string &msg = op.strAttr("message");
    std::string file = op.loc().file < irModule_.files.size() ? irModule_.files[op.loc().file] : "";
    auto fail = mod_->getOrInsertFunction(
        "__assertfail", llvm::FunctionType::get(b_.getVoidTy(),
                                                {b_.getPtrTy(), b_.getPtrTy(), b_.getInt32Ty(),
                                                 b_.getPtrTy(), b_.getInt64Ty()},
                                                false));
    llvm::Value *own = t.isScalar() ? isThread0() : ownerOf(t.numElements());
    for (llvm::Value *x : c) {
      emitGuarded(andOpt(own, b_.CreateNot(x)), [&]() -> llvm::Value * {
        b_.CreateCall(fail, {globalString(msg), globalString(file),
                             b_.getInt32(op.loc().line), globalString(fn_.name()),
                             b_.getInt64(1)});
        return nullptr;
      });
    }
  }

  // ---- Structured control flow -------------------------------------------

  void lowerYield(const ir::Op &op, std::vector<Slots> *yielded) {
    if (!yielded)
      throw Unsupported("internal: yield outside a region");
    yielded->clear();
    for (size_t i = 0; i < op.numOperands(); ++i) {
      const ir::Value *v = op.operand(static_cast<unsigned>(i));
      yielded->push_back(mmaCarriedAt(op, i) ? carriedSlots(v, true, mmaCarriedPermuted(op, i))
                                            : get(v));
    }
  }

  /// Phis in the current block for loop-carried values shaped like `init`.
  std::vector<Slots> makePhis(const std::vector<Slots> &init, llvm::BasicBlock *from) {
    std::vector<Slots> phis;
    for (const Slots &s : init) {
      Slots p;
      for (llvm::Value *x : s) {
        llvm::PHINode *phi = b_.CreatePHI(x->getType(), 2);
        phi->addIncoming(x, from);
        p.push_back(phi);
      }
      phis.push_back(p);
    }
    return phis;
  }
  static void addIncoming(std::vector<Slots> &phis, const std::vector<Slots> &vals,
                          llvm::BasicBlock *from) {
    for (size_t i = 0; i < phis.size(); ++i)
      for (size_t k = 0; k < phis[i].size(); ++k)
        llvm::cast<llvm::PHINode>(phis[i][k])->addIncoming(slot(vals[i], k), from);
  }
  void bindArgs(const ir::Block &region, const std::vector<Slots> &vals, size_t first = 0) {
    for (size_t i = 0; i < vals.size(); ++i)
      bindValue(region.arg(static_cast<unsigned>(first + i)), vals[i]);
  }
  /// Slots of a loop's initial values (operands from index `from`), each
  /// widened to its slot count in the layout the loop carries it in.
  std::vector<Slots> operandSlots(const ir::Op &op, size_t from) {
    std::vector<Slots> out;
    for (size_t i = from; i < op.numOperands(); ++i) {
      bool carried = i - from < op.numResults(); // a while's results: its condition's values
      const ir::Value *r = carried ? op.result(static_cast<unsigned>(i - from)) : nullptr;
      out.push_back(carriedSlots(op.operand(static_cast<unsigned>(i)), r && mmaRes_.count(r) > 0,
                                 r && keysPermuted(r)));
    }
    return out;
  }

  void lowerIf(const ir::Op &op) {
    llvm::Value *cond = get(op.operand(0))[0];
    auto *thenBB = llvm::BasicBlock::Create(ctx_, "if.then", kernel_);
    auto *elseBB = llvm::BasicBlock::Create(ctx_, "if.else", kernel_);
    auto *merge = llvm::BasicBlock::Create(ctx_, "if.end", kernel_);
    b_.CreateCondBr(cond, thenBB, elseBB);
    std::vector<std::pair<llvm::BasicBlock *, std::vector<Slots>>> arms;
    Conditional arm(*this);
    for (unsigned r = 0; r < 2; ++r) {
      b_.SetInsertPoint(r == 0 ? thenBB : elseBB);
      std::vector<Slots> y;
      lowerBlock(*op.region(r), &y);
      if (b_.GetInsertBlock()->getTerminator())
        continue; // returned
      arms.push_back({b_.GetInsertBlock(), y});
      b_.CreateBr(merge);
    }
    b_.SetInsertPoint(merge);
    for (size_t i = 0; i < op.numResults(); ++i) {
      int64_t n = slotsOf(op.result(i)->type());
      Slots s;
      for (int64_t k = 0; k < n; ++k) {
        llvm::Type *ty = arms.empty() ? nullptr : slot(arms[0].second[i], k)->getType();
        if (arms.empty()) {
          s.push_back(llvm::PoisonValue::get(b_.getInt32Ty()));
          continue;
        }
        llvm::PHINode *phi = b_.CreatePHI(ty, static_cast<unsigned>(arms.size()));
        for (auto &[bb, y] : arms)
          phi->addIncoming(slot(y[i], static_cast<size_t>(k)), bb);
        s.push_back(phi);
      }
      values_[op.result(static_cast<unsigned>(i))] = s;
    }
    if (arms.empty()) {
      b_.CreateUnreachable();
      b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "dead", kernel_));
    }
  }

  /// A loop's blocks: `pre` (where it is entered from), then header, body and
  /// exit, named prefix.cond, prefix.body, prefix.end; leaves the builder in
  /// the header.
  struct LoopBlocks {
    llvm::BasicBlock *pre, *header, *body, *exit;
  };
  LoopBlocks enterLoop(const std::string &prefix) {
    LoopBlocks l{b_.GetInsertBlock(), llvm::BasicBlock::Create(ctx_, prefix + ".cond", kernel_),
                 llvm::BasicBlock::Create(ctx_, prefix + ".body", kernel_),
                 llvm::BasicBlock::Create(ctx_, prefix + ".end", kernel_)};
    b_.CreateBr(l.header);
    b_.SetInsertPoint(l.header);
    return l;
  }

  void lowerWhile(const ir::Op &op) {
    if (lowerMmaLoop(op))
      return;
    if (auto it = valuePipes_.find(&op); it != valuePipes_.end())
      return lowerValuePipeLoop(op, *it->second);
    std::vector<Slots> init = operandSlots(op, 0);
    Conditional inLoop(*this); // (the condition runs once at least: not counted on either)
    auto [pre, header, body, exit] = enterLoop("while");
    std::vector<Slots> phis = makePhis(init, pre);
    bindArgs(*op.region(0), phis);
    std::vector<Slots> fwd;
    lowerBlock(*op.region(0), &fwd);
    if (fwd.empty())
      throw Unsupported("internal: while without a condition");
    llvm::Value *cond = fwd[0][0];
    fwd.erase(fwd.begin());
    b_.CreateCondBr(cond, body, exit);
    b_.SetInsertPoint(body);
    bindArgs(*op.region(1), fwd);
    std::vector<Slots> next;
    lowerBlock(*op.region(1), &next);
    if (!b_.GetInsertBlock()->getTerminator()) {
      addIncoming(phis, next, b_.GetInsertBlock());
      b_.CreateBr(header);
    }
    b_.SetInsertPoint(exit);
    for (size_t i = 0; i < op.numResults(); ++i)
      bindValue(op.result(static_cast<unsigned>(i)), fwd[i]);
  }

  void lowerFor(const ir::Op &op) {
    if (lowerMmaLoop(op))
      return;
    if (auto it = valuePipes_.find(&op); it != valuePipes_.end())
      return lowerValuePipeLoop(op, *it->second);
    const ir::Type &ivT = op.operand(0)->type();
    llvm::Value *lb = get(op.operand(0))[0], *ub = get(op.operand(1))[0];
    llvm::Value *step = get(op.operand(2))[0];
    std::vector<Slots> init = operandSlots(op, 3);
    Conditional inLoop(*this);
    auto [pre, header, body, exit] = enterLoop("for");
    llvm::PHINode *iv = b_.CreatePHI(lb->getType(), 2);
    iv->addIncoming(lb, pre);
    std::vector<Slots> phis = makePhis(init, pre);
    llvm::Value *more = isSignedInt(ivT.dtype) ? b_.CreateICmpSLT(iv, ub) : b_.CreateICmpULT(iv, ub);
    b_.CreateCondBr(more, body, exit);
    b_.SetInsertPoint(body);
    values_[op.region(0)->arg(0)] = {iv};
    bindArgs(*op.region(0), phis, 1);
    std::vector<Slots> next;
    lowerBlock(*op.region(0), &next);
    if (!b_.GetInsertBlock()->getTerminator()) {
      iv->addIncoming(b_.CreateAdd(iv, step), b_.GetInsertBlock());
      addIncoming(phis, next, b_.GetInsertBlock());
      b_.CreateBr(header);
    }
    b_.SetInsertPoint(exit);
    for (size_t i = 0; i < op.numResults(); ++i)
      bindValue(op.result(static_cast<unsigned>(i)), phis[i]);
  }

  const ir::Module &irModule_;
  const ir::Function &fn_;
  const Options &opts_;
  llvm::LLVMContext &ctx_;
  std::unique_ptr<llvm::Module> mod_;
  llvm::IRBuilder<> b_;
  ScalarEmitter se_;
  int64_t T_;
  int64_t vec_ = 1;
  std::unique_ptr<AxisAnalysis> axes_; // with vectorize or remat
  std::unordered_map<const ir::Value *, std::vector<const ir::Op *>> users_;
  std::unordered_set<const ir::Op *> deferredLoads_; // done by their trans users
  std::unordered_set<const ir::Op *> loweredEarly_;  // result bound where another op lowered it
  std::unordered_map<const ir::Value *, bool> rematable_;
  llvm::Function *kernel_ = nullptr;
  llvm::BasicBlock *exit_ = nullptr;
  llvm::Value *tid_ = nullptr;
  llvm::Value *warpgroup_ = nullptr; // warpgroupIndex()
  llvm::GlobalVariable *smem_ = nullptr;
  size_t sharedBytes_ = 0;
  // Matmul loops' shared memory: placed after everything else once that is
  // known (pipeBase_ is a placeholder for its byte offset until then).
  llvm::Instruction *pipeBase_ = nullptr;
  size_t pipeBytes_ = 0;
  size_t pipeAlign_ = 16;     // of pipeBase_ and of the shared array (wgmma: 1024)
  // The pipelined loop whose cp.async stages, at pipeBase(), hold tiles for
  // its next trips while its trip is lowered (null: none). A loop lowered in
  // that trip that stages at pipeBase() too would overwrite them:
  // holdsLoopWithDot keeps such loops from both being pipelined, and a
  // StagesClaim checks it as each such loop is lowered.
  const ir::Op *stagesOwner_ = nullptr;
  /// Held while a loop that uses the stages' region (any matmul loop, an
  /// attention loop's values pipeline) is lowered: refuses, as an internal
  /// error, a loop lowered in a pipelined loop's trip; a pipelined loop owns
  /// the stages until its claim ends.
  class StagesClaim {
  public:
    StagesClaim(Lowerer &l, const ir::Op &loop, bool pipelined)
        : l_(l), prev_(l.stagesOwner_), depth_(l.condDepth_) {
      if (prev_)
        throw Unsupported("internal: the loop at line " + std::to_string(loop.loc().line) +
                          " would overwrite the cp.async stages of the pipelined loop at line " +
                          std::to_string(prev_->loc().line) +
                          " whose trip runs it (--disable-opt pipeline compiles the loops "
                          "without stages)");
      if (pipelined)
        l_.stagesOwner_ = &loop;
      l_.condDepth_ = 0; // (the loop's own events run wherever it runs)
    }
    ~StagesClaim() {
      l_.stagesOwner_ = prev_;
      l_.condDepth_ = depth_;
    }
    StagesClaim(const StagesClaim &) = delete;
    StagesClaim &operator=(const StagesClaim &) = delete;

  private:
    Lowerer &l_;
    const ir::Op *prev_;
    int depth_;
  };
  bool archSpecific_ = false; // sm_90a instructions were emitted (wgmma)
  // The lowering paths this kernel took (Compiled::paths), noted where the
  // emitting code commits to one.
  std::set<std::string> paths_;
  void notePath(std::string p) { paths_.insert(std::move(p)); }
  llvm::Value *stagingBase_ = nullptr; // a byte offset stagedAddr adds (null: none)
  std::vector<KernelParam> params_;
  std::unordered_map<const ir::Value *, Slots> values_;
  std::unique_ptr<llvm::DIBuilder> di_;
  llvm::DIFile *diFile_ = nullptr;
  llvm::DISubprogram *sp_ = nullptr;
};

} // namespace tc::codegen::lower
