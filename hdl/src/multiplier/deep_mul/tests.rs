use super::*;
use crate::testing::{drive, simulate};
use ecrt_golden::hw::{exact_limbs, ClassicPass, FoldContext, FoldValue, Multiplicand};
use ecrt_golden::prime::random_odd;
use num_bigint::{BigUint, RandBigInt};
use rand::rngs::StdRng;
use rand::SeedableRng;

#[test]
fn deep_mul_is_synthesizable() {
    let shape = FoldShape::new(20, 2).unwrap();
    let mut uut = DeepMul::new(&shape);
    uut.connect_all();
    yosys_validate("ecrt_deep_mul", &generate_verilog(&uut)).unwrap();
}

/// One multiplication for a lane, and what the golden model says of it.
#[derive(Clone)]
struct Job {
    a: Vec<u64>,
    b: Vec<u64>,
    /// M̂'s limbs, or N's for a classic pass.
    m_hat: Vec<u64>,
    /// `None` for the folding mode.
    classic: Option<(ClassicOp, u64)>,
    /// T after each of the lane's turns from its first step on.
    turns: Vec<Vec<u64>>,
    result: Vec<u64>,
    cycles: usize,
}

impl Job {
    fn fold(ctx: &FoldContext, a: &FoldValue, b: &FoldValue) -> Job {
        let trace = ctx.mul_trace(a, b);
        Job {
            a: a.limbs().to_vec(),
            b: b.limbs().to_vec(),
            m_hat: ctx.m_hat().to_vec(),
            classic: None,
            turns: trace.steps.into_iter().map(|s| s.t).collect(),
            result: trace.result.limbs().to_vec(),
            cycles: ctx.shape().deep_cycles(),
        }
    }

    fn classic(shape: &FoldShape, pass: &ClassicPass, op: ClassicOp, a: Vec<u64>, b: Vec<u64>) -> Job {
        let trace = pass.deep_trace(op, &a, &b);
        let mut n = exact_limbs(shape, pass.modulus());
        n.truncate(shape.modulus_limbs);
        Job {
            a,
            b,
            m_hat: n,
            classic: Some((op, pass.n_prime())),
            turns: trace.turns,
            result: trace.result.limbs().to_vec(),
            cycles: shape.deep_classic_cycles(op),
        }
    }
}

/// What one cycle shows: the lane at its load phase, whether it loaded, its done (and the next
/// cycle's, announced) and result, and T.
struct Cycle {
    lane: usize,
    loaded: bool,
    done: bool,
    done_next: bool,
    result: Vec<u64>,
    t: Vec<u64>,
}

/// Runs `rounds[r][lane]` in each lane, round after round, each started in the cycle the lane's
/// previous result shows, and checks every turn's T, the result and its cycle against the job's.
fn run_and_check(shape: &FoldShape, rounds: Vec<Vec<Job>>, what: &str) {
    let lanes = shape.deep_lanes();
    assert!(rounds.iter().all(|r| r.len() == lanes));
    let longest = rounds.iter().flatten().map(|j| j.cycles).max().unwrap();
    let cycles = rounds.len() * longest + 3 * lanes + 2;
    let jobs = rounds.clone();
    // Starts announced per lane (the first, then the next announced the cycle before the result
    // shows), and the lane announced for this cycle.
    let mut announced = vec![0usize; lanes];
    let mut loading: Option<usize> = None;
    let trace: Vec<Cycle> = simulate(DeepMul::new(shape), cycles, move |uut, _| {
        let lane = uut.lane.val().to_u64() as usize;
        let (done, done_next) = (uut.done.val(), uut.done_next.val());
        let result: Vec<u64> = uut.result.iter().map(|r| r.val().to_u64()).collect();
        let loaded = loading == Some(lane);
        if loaded {
            let job = &jobs[announced[lane] - 1][lane];
            drive(&mut uut.a_in, &job.a);
            drive(&mut uut.b_in, &job.b);
            drive(&mut uut.m_hat_in, &job.m_hat);
            let (op, n_prime) = job.classic.unwrap_or((ClassicOp::Multiply, 0));
            uut.classic_in.next = job.classic.is_some();
            uut.redc_in.next = op == ClassicOp::WideRedc;
            uut.decrement_in.next = op == ClassicOp::Decremented;
            uut.n_prime_in.next = n_prime.into();
        }
        let next = (lane + 1) % lanes;
        let announce = announced[next] < jobs.len() && uut.next_free.val();
        if announce {
            announced[next] += 1;
        }
        uut.start_next.next = announce;
        loading = announce.then_some(next);
        Cycle { lane, loaded, done, done_next, result, t: uut.t.iter().map(|t| t.val().to_u64()).collect() }
    });

    for (c, pair) in trace.windows(2).enumerate() {
        assert_eq!(pair[0].done_next, pair[1].done, "{what}, cycle {c}: done announced a cycle ahead");
    }
    for lane in 0..lanes {
        let mut start = trace.iter().position(|c| c.lane == lane && c.loaded).unwrap();
        for (n, job) in rounds.iter().map(|r| &r[lane]).enumerate() {
            let kind = job.classic.map_or("folding".to_string(), |(op, _)| format!("{op:?}"));
            let at = format!("{what}, lane {lane}, multiplication {n} ({kind})");
            for (u, t) in job.turns.iter().enumerate() {
                let turn = &trace[start + (u + 3) * lanes - 1];
                assert_eq!((turn.lane + 1) % lanes, lane, "{at}: the turn is the lane's");
                assert_eq!(&turn.t, t, "{at}, turn {u}: T");
            }
            let done_at = start + job.cycles;
            for (c, cycle) in trace.iter().enumerate().take(done_at).skip(start + 1) {
                assert!(!(cycle.done && cycle.lane == lane), "{at}: done early, cycle {c}");
            }
            let shown = &trace[done_at];
            assert!(shown.done && shown.lane == lane, "{at}: done after {} cycles", job.cycles);
            assert_eq!(shown.result, job.result, "{at}: result");
            if n + 1 < rounds.len() {
                assert!(shown.loaded, "{at}: the next starts as the result shows");
            }
            start = done_at;
        }
    }
}

fn contexts(shape: &FoldShape, modulus_bits: usize, rng: &mut StdRng) -> Vec<FoldContext> {
    let k = shape.limbs_per_step;
    (0..shape.deep_lanes())
        .map(|_| FoldContext::with_width(&random_odd(modulus_bits as u64, rng), modulus_bits, k).unwrap())
        .collect()
}

/// Every lane multiplies (each its own modulus), then squares its result as soon as it shows:
/// every step's T equals the golden model's limb for limb at the lane's turn, every result too,
/// and each takes exactly `deep_cycles` from its start.
#[test]
fn every_lane_matches_the_golden_model_step_by_step() {
    let mut rng = StdRng::seed_from_u64(31);
    for (modulus_bits, k) in [(30usize, 1usize), (40, 2), (60, 3), (45, 4)] {
        let shape = FoldShape::new(modulus_bits, k).unwrap();
        let contexts = contexts(&shape, modulus_bits, &mut rng);
        // Lane 0 starts from X − 1 twice (the widest operands), the others from random values;
        // the squarings take the results as the hardware hands them over.
        let (firsts, squares): (Vec<Job>, Vec<Job>) = contexts
            .iter()
            .enumerate()
            .map(|(lane, ctx)| {
                let mut pick = || if lane == 0 { ctx.bound() - 1u32 } else { rng.gen_biguint_below(ctx.bound()) };
                let (a, b) = (ctx.exact(&pick()), ctx.exact(&pick()));
                let first = Job::fold(ctx, &a, &b);
                let product = FoldValue::from_limbs(first.result.clone());
                (first, Job::fold(ctx, &product, &product))
            })
            .unzip();
        run_and_check(&shape, vec![firsts, squares], &format!("k = {k}"));
    }
}

/// Lanes running the three classic passes beside folding ones, then each lane another kind:
/// every turn's T equals `ClassicPass::deep_trace`'s register for register, every result too, in
/// exactly `deep_classic_cycles`; a pass after another starts from a clean carry, borrow and mode.
#[test]
fn classic_passes_match_the_golden_model_turn_by_turn() {
    let mut rng = StdRng::seed_from_u64(37);
    let kinds = [None, Some(ClassicOp::Multiply), Some(ClassicOp::WideRedc), Some(ClassicOp::Decremented)];
    for (modulus_bits, k) in [(30usize, 1usize), (40, 2), (60, 3), (45, 4)] {
        let shape = FoldShape::new(modulus_bits, k).unwrap();
        let contexts = contexts(&shape, modulus_bits, &mut rng);
        let l = shape.operand_limbs;
        let job = |lane: usize, kind: Option<ClassicOp>, rng: &mut StdRng| {
            let ctx = &contexts[lane];
            let n = ctx.modulus();
            let pass = ClassicPass::new(&shape, n).unwrap().with_multiplicand(Multiplicand::Windows);
            let below_n = |rng: &mut StdRng| exact_limbs(&shape, &rng.gen_biguint_below(n));
            match kind {
                None => Job::fold(
                    ctx,
                    &ctx.exact(&rng.gen_biguint_below(ctx.bound())),
                    &ctx.exact(&rng.gen_biguint_below(ctx.bound())),
                ),
                Some(ClassicOp::Multiply) => {
                    // A as wide as the folding mode leaves it, with its redundant limbs.
                    let a = ctx.exact(&(ctx.bound() - 1u32 - rng.gen_biguint_below(n))).limbs().to_vec();
                    Job::classic(&shape, &pass, ClassicOp::Multiply, a, below_n(rng))
                }
                Some(ClassicOp::WideRedc) => {
                    let c = rng.gen_biguint_below(&(n << (17 * l)));
                    let low = BigUint::from(1u32) << (17 * l);
                    Job::classic(
                        &shape,
                        &pass,
                        ClassicOp::WideRedc,
                        exact_limbs(&shape, &(&c >> (17 * l))),
                        exact_limbs(&shape, &(&c % low)),
                    )
                }
                Some(ClassicOp::Decremented) => {
                    // A = 2^(17j) borrows through j zero limbs.
                    let a = if lane % 2 == 0 { BigUint::from(1u32) << 17 } else { rng.gen_biguint_below(n) + 1u32 };
                    Job::classic(&shape, &pass, ClassicOp::Decremented, exact_limbs(&shape, &a), below_n(rng))
                }
            }
        };
        let lanes = shape.deep_lanes();
        let rounds: Vec<Vec<Job>> = (0..2)
            .map(|round| (0..lanes).map(|lane| job(lane, kinds[(lane + round) % kinds.len()], &mut rng)).collect())
            .collect();
        run_and_check(&shape, rounds, &format!("k = {k}"));
    }
}
