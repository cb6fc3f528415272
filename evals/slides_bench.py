"""The slide-detection benchmark: generated lecture videos with known slide timelines, read by
``services.transcribe.slides.detect_slides``.

    .venv/bin/python -m evals.slides_bench                       # the dev set (default)
    .venv/bin/python -m evals.slides_bench --set sealed          # once, at the end of a tuning round
    .venv/bin/python -m evals.slides_bench --quick               # two short videos, a smoke test
    .venv/bin/python -m evals.slides_bench --module /tmp/slides_old.py   # another copy of the detector
    .venv/bin/python -m evals.slides_bench --cost [--module ...]  # wall time on a 5-minute 1080p25 video
    .venv/bin/python -m evals.slides_bench --order               # OCR reading order on stills (order_cer)

**Videos.** Each video is rendered frame by frame (slides by :mod:`evals.slide_designs`, Pillow,
DejaVu fonts) and piped into ffmpeg: H.264 (libx264, ``veryfast``, CRF 23, yuv420p) with a silent
AAC track, 3-12 frames per second (the cost video: 1920×1080 at 25 fps). Every slide stays on
screen 8-15 s (build steps 6-11 s, editor states 3.5-7 s). The videos are cached under
``evals/.cache/slides/`` keyed by a hash of everything that draws them, so a second run only
detects. Scenarios:

- ``text-changes``: a deck in one design where only the text changes (same background, same
  template), one video per design of :data:`evals.slide_designs.DESIGNS`;
- ``builds``: bullets appearing one at a time; every build step is a shown slide whose *key* (see
  below) is the newly added bullet, so a detector must notice the added line;
- ``sparse-text``: plain slides keeping their title while one short line under it changes (the
  smallest change a slide makes), each slide keyed by its line;
- ``small-text``: 18 px body text on 1920×1080 (``plain-small``), 4-5 bullets a slide;
- ``pip``: a speaker picture-in-picture in a bottom corner (a synthetic face: moving head, mouth,
  sensor noise, a new picture every frame at 12 fps) over the slides; it must not make slides;
- ``screen-recording``: a dark code editor (tab, line numbers, syntax colours, blinking caret)
  where lines are typed at 20 characters a second, then the view scrolls to the top and pages
  down; each screenful held for at least 3 s is a shown slide whose key is the lines that were not
  on screen in the previous held state; typing and scrolling are *transitions*;
- ``cursor``: a laser-pointer dot and a mouse arrow moving over still slides (no new slides);
- ``fade``: 0.5 s dissolves between slides (a transition);
- ``dark-deck`` / ``light-deck``: a 1280×720 deck in a dark and in a light theme, opening with a
  title slide.

The slide texts (titles and 2-5 lines: biology, chemistry, physics, economics, history, linear
algebra, statistics, computer science, philosophy for ``dev``; medicine, law, music, geology,
astronomy, psychology, linguistics, ecology, architecture for ``sealed``) and the random seeds
(slide durations, diagram shapes, the face and pointer paths, which corner) differ between the sets.
``dev`` (about two thirds of the shown slides) is for tuning; ``sealed`` is run once at the end,
and its per-scenario breakdown is kept out of ``slides.md`` (it is in the JSON).

**Scores.** A shown slide is *found* when a detected ``Slide`` overlapping its time span has read at
least 80 % of the words of its key (its title; for a build step the added bullet; for an editor
state the new lines), words being lower-cased runs of at least two letters or digits. Shown and
detected slides are matched one to one (maximum matching, larger time overlap first), so one
detected slide spanning three build steps finds one of them, and a slide detected twice counts
once. Then, per design and per scenario, with totals:

- **recall**: found / shown;
- **CER**: ``jiwer.cer`` between the shown slide's text (every visible line, title first, as
  :func:`evals.slide_designs.render_slide_with_text` reports it: lower-cased, whitespace collapsed,
  lines joined by spaces) and its matched detected slide's lines (likewise), averaged over found
  slides;
- **spurious**: detected slides matched to no shown slide (duplicates included), except those lying
  mostly (≥ 50 %) inside a transition (typing, scrolling, a dissolve), which are counted as
  **transient** instead;
- **OCR calls**: calls to the detector module's ``ocr_lines`` (or, failing that, the number its
  "N OCR calls" log line reports);
- **s / video min**: wall time of ``detect_slides`` per minute of video (after one untimed warm-up
  call that loads the OCR model). The machine's load average is recorded next to it.

``--cost`` makes one 5-minute 1920×1080 25 fps video (a slide change about every 10 s, a speaker
picture-in-picture) and reports the detector's wall time per video minute there, to compare
detector versions (the target: a 2-hour lecture's slide pass no slower than 1.5× today's).

Results: ``evals/results/slides-latest.json`` (one entry per set and detector, each run replacing its
own entry) and ``evals/results/slides.md`` (the same as tables, the command line on top of each).
``--module PATH`` loads ``detect_slides`` from another file (run from the repository root, so its
``lecturecopilot`` imports resolve), e.g. the committed detector:
``git show HEAD:services/transcribe/slides.py > /tmp/slides_old.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import logging
import math
import os
import random
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
from PIL import Image, ImageDraw

from evals.slide_designs import DESIGNS, MONO, SANS, _font, render_slide_with_text

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "evals" / ".cache" / "slides"
RESULTS = ROOT / "evals" / "results"
GEN_VERSION = "slides-bench-1"  # bump when the drawing or encoding changes: the cache keys change with it
MIN_KEY_SHARE = 0.8  # a shown slide is found when this share of its key words is read
SETS = ("dev", "sealed")

# Slide texts: "## field" starts a field, a line without "- " is a title, "- " lines are its lines.
DEV_TEXTS = """
## biology
Photosynthesis: the Calvin cycle
- RuBisCO fixes CO2 onto ribulose bisphosphate
- Thylakoid membrane hosts the light reactions
- NADPH and ATP drive the reduction phase
Mitochondrial respiration
- Glycolysis yields two pyruvate per glucose
- The Krebs cycle runs in the matrix
- Cytochrome c oxidase reduces oxygen to water
DNA replication fork
- Helicase unwinds the double helix
- Okazaki fragments form on the lagging strand
- DNA ligase seals the nicks
Gene expression in eukaryotes
- Introns are removed by the spliceosome
- A poly-A tail protects the mRNA
- Ribosomes translate codons into amino acids
Mendelian inheritance
- Alleles segregate during meiosis
- Punnett squares predict a 3:1 ratio
- Independent assortment of unlinked genes
Action potentials in neurons
- Voltage-gated sodium channels open first
- Potassium efflux repolarises the membrane
- Myelin enables saltatory conduction
Enzyme kinetics
- Michaelis-Menten saturation curve
- Km is the substrate concentration at half Vmax
- Competitive inhibitors raise the apparent Km
Population ecology
- Logistic growth levels off at carrying capacity
- r-selected species breed early and often
- Predator and prey cycles lag each other
## chemistry
Le Chatelier's principle
- A stressed equilibrium shifts to relieve it
- Raising pressure favours fewer gas moles
- Exothermic reactions shift left when heated
Acid-base titration
- Equivalence point of a strong acid and base
- Phenolphthalein turns pink above pH 8.2
- Buffers resist changes in pH
Nucleophilic substitution
- SN2 inverts the stereocentre in one step
- SN1 proceeds through a carbocation
- Polar aprotic solvents speed up SN2
Aromaticity and benzene
- Huckel's rule: 4n + 2 pi electrons
- Delocalised electrons stabilise the ring
- Electrophilic aromatic substitution
Chemical thermodynamics
- Gibbs free energy decides spontaneity
- Entropy of the universe always increases
- Hess's law adds reaction enthalpies
Electrochemical cells
- Oxidation happens at the anode
- Standard reduction potentials in volts
- The Nernst equation corrects for concentration
Reaction rates
- Rate constants follow the Arrhenius equation
- Catalysts lower the activation energy
- Half-life of a first-order reaction
Intermolecular forces
- Hydrogen bonds raise boiling points
- London dispersion grows with molar mass
- Dipole-dipole attraction in polar molecules
## physics
Newton's laws of motion
- Inertia keeps a body in uniform motion
- Force equals mass times acceleration
- Every action has an equal reaction
Conservation of momentum
- Elastic collisions conserve kinetic energy
- Inelastic collisions lose energy to heat
- Impulse is the change in momentum
Maxwell's equations
- Gauss's law relates flux to charge
- Faraday's law: changing flux induces EMF
- Light is an electromagnetic wave
Special relativity
- The speed of light is the same for everyone
- Moving clocks run slow: time dilation
- Lorentz contraction along the motion
Quantum harmonic oscillator
- Energy levels are equally spaced
- Zero-point energy is half h-bar omega
- Ladder operators raise and lower states
Thermodynamic cycles
- The Carnot engine sets the efficiency limit
- Adiabatic steps exchange no heat
- Entropy change of a reversible cycle is zero
Wave interference
- Young's double slit makes fringes
- Path difference of half a wavelength cancels
- Diffraction grating resolves spectral lines
Fluid dynamics
- Bernoulli's principle along a streamline
- Reynolds number predicts turbulence
- Viscosity resists shear flow
## economics
Supply and demand
- Equilibrium price clears the market
- A price ceiling below equilibrium makes shortages
- Elasticity measures responsiveness
Opportunity cost
- The value of the next best alternative
- Production possibility frontier
- Comparative advantage drives trade
Monetary policy
- Central banks set the policy rate
- Quantitative easing buys long-term bonds
- The Taylor rule links rates to inflation
Market structures
- Perfect competition has many price takers
- A monopolist sets marginal revenue equal to cost
- Oligopolies and the kinked demand curve
Game theory in economics
- Nash equilibrium: no one gains by deviating
- The prisoner's dilemma
- Repeated games sustain cooperation
Keynesian macroeconomics
- Aggregate demand drives short-run output
- The fiscal multiplier
- Liquidity trap at the zero lower bound
## history
The Industrial Revolution
- Steam engines powered textile mills
- Railways connected markets after 1830
- Urbanisation and factory labour
The Treaty of Westphalia
- Signed in 1648 after the Thirty Years' War
- Recognised state sovereignty
- A new balance of power in Europe
The French Revolution
- The Estates-General met in May 1789
- Storming of the Bastille
- The Declaration of the Rights of Man
The Silk Road
- Trade routes linked Chang'an and Constantinople
- Silk, spices and paper moved west
- Ideas and diseases travelled too
The Meiji Restoration
- Imperial rule restored in 1868
- Rapid industrialisation and conscription
- End of the samurai class
Decolonisation after 1945
- Indian independence in 1947
- The Bandung Conference of 1955
- The Year of Africa in 1960
## linear algebra
Eigenvalues and eigenvectors
- A v equals lambda v
- The characteristic polynomial det(A - lambda I)
- Diagonalisation needs n independent eigenvectors
Singular value decomposition
- Any matrix factors as U Sigma V transpose
- Singular values are non-negative
- Low-rank approximation by truncation
Gaussian elimination
- Row operations reach echelon form
- Pivots reveal the rank
- Back substitution solves the system
Orthogonal projections
- Project b onto the column space of A
- The normal equations A^T A x = A^T b
- Gram-Schmidt builds an orthonormal basis
Vector spaces and subspaces
- Closed under addition and scalar multiplication
- Null space and column space
- Rank-nullity theorem
Determinants
- The volume scaling factor of a map
- Cofactor expansion along a row
- A matrix is invertible iff det is nonzero
## statistics
Hypothesis testing
- The null hypothesis assumes no effect
- A p-value below alpha rejects it
- Type I and type II errors
Confidence intervals
- A 95% interval covers the mean in 95% of samples
- Width shrinks with the square root of n
- Student's t distribution for small samples
Linear regression
- Ordinary least squares minimises residuals
- R-squared measures explained variance
- Check residuals for heteroscedasticity
Bayesian inference
- Posterior is likelihood times prior
- Conjugate priors keep the algebra simple
- Markov chain Monte Carlo samples the posterior
The central limit theorem
- Sample means approach a normal distribution
- Standard error is sigma over root n
- Holds for finite variance
Analysis of variance
- One-way ANOVA compares group means
- The F statistic is a ratio of variances
- Tukey's test for pairwise comparisons
Maximum likelihood estimation
- Choose parameters that maximise the likelihood
- Log-likelihood turns products into sums
- Fisher information bounds the variance
## computer science
Binary search trees
- Left subtree keys are smaller
- In-order traversal lists keys sorted
- AVL rotations keep the height logarithmic
Dijkstra's algorithm
- Single-source shortest paths
- A priority queue picks the closest vertex
- Fails with negative edge weights
Dynamic programming
- Optimal substructure and overlapping subproblems
- Memoisation caches results
- The knapsack problem in pseudo-polynomial time
Hash tables
- A hash function maps keys to buckets
- Chaining resolves collisions
- Load factor triggers resizing
TCP congestion control
- Slow start doubles the window
- Additive increase, multiplicative decrease
- Fast retransmit after three duplicate ACKs
## philosophy
Kant's categorical imperative
- Act only on maxims you could universalise
- Treat persons never merely as means
- Duty over consequences
Utilitarianism
- Bentham's felicific calculus
- Mill distinguished higher pleasures
- Rule versus act utilitarianism
Plato's theory of forms
- The allegory of the cave
- Forms are perfect and unchanging
- Knowledge as recollection
## biology
The cell membrane
- Phospholipid bilayer with embedded proteins
- Cholesterol modulates fluidity
- Sodium-potassium pump uses ATP
Natural selection
- Variation, inheritance and differential survival
- Darwin's finches and beak size
- Genetic drift in small populations
The immune response
- B cells produce antibodies
- Cytotoxic T cells kill infected cells
- Memory cells speed up reinfection response
## chemistry
Organic functional groups
- Aldehydes and ketones share a carbonyl
- Carboxylic acids donate a proton
- Esters form by Fischer esterification
Crystal field theory
- d orbitals split in an octahedral field
- High-spin and low-spin complexes
- Colour comes from d-d transitions
## physics
Electric circuits
- Ohm's law: V equals I R
- Kirchhoff's current law at each node
- Capacitors store charge in an electric field
Rotational dynamics
- Torque equals moment of inertia times alpha
- Angular momentum is conserved
- Gyroscopic precession
## economics
Behavioural economics
- Loss aversion and prospect theory
- Anchoring biases estimates
- Nudges change default choices
International trade
- Tariffs raise domestic prices
- Exchange rates and the balance of payments
- Ricardo's model of two goods
## history
The Renaissance in Florence
- Medici patronage of the arts
- Brunelleschi's dome
- Humanism revived classical texts
The Cold War
- The Berlin Blockade of 1948
- The Cuban Missile Crisis of 1962
- Detente and arms control treaties
## statistics
Sampling methods
- Simple random sampling
- Stratified samples reduce variance
- Cluster sampling cuts travel costs
## linear algebra
Matrix multiplication
- Row times column dot products
- Not commutative in general
- Associative and distributive
"""

SEALED_TEXTS = """
## medicine
Heart failure with reduced ejection fraction
- Ejection fraction below 40 percent
- ACE inhibitors and beta blockers
- Loop diuretics relieve congestion
Type 2 diabetes mellitus
- Insulin resistance in muscle and liver
- HbA1c above 6.5 percent is diagnostic
- Metformin is the first-line drug
Sepsis management
- Blood cultures before antibiotics
- Lactate above 2 mmol/L signals hypoperfusion
- Norepinephrine is the first vasopressor
Asthma pathophysiology
- Bronchial hyperresponsiveness
- Eosinophilic airway inflammation
- Inhaled corticosteroids control symptoms
Renal physiology
- The glomerulus filters plasma
- The loop of Henle concentrates urine
- Aldosterone increases sodium reabsorption
## law
Elements of a valid contract
- Offer and acceptance
- Consideration from both parties
- Intention to create legal relations
The tort of negligence
- Duty of care from Donoghue v Stevenson
- Breach judged by the reasonable person
- Causation and remoteness of damage
Judicial review
- Illegality, irrationality and procedural impropriety
- Wednesbury unreasonableness
- Remedies include quashing orders
Criminal liability
- Actus reus is the guilty act
- Mens rea is the guilty mind
- Strict liability offences need no intent
Intellectual property
- Patents protect inventions for twenty years
- Copyright arises automatically
- Trademarks distinguish goods in trade
## music
Sonata form
- Exposition presents two themes
- Development modulates through keys
- Recapitulation returns to the tonic
Counterpoint in the Baroque
- Bach's fugues in the Well-Tempered Clavier
- Subject, answer and countersubject
- Parallel fifths are avoided
The circle of fifths
- Each step adds one sharp
- Relative minor keys share signatures
- Modulation to the dominant
Jazz harmony
- The ii-V-I progression
- Tritone substitution
- Extended chords with ninths and thirteenths
## geology
Plate tectonics
- Divergent boundaries form mid-ocean ridges
- Subduction zones build volcanic arcs
- Transform faults like the San Andreas
The rock cycle
- Igneous rocks cool from magma
- Sedimentary rocks form in layers
- Metamorphism under heat and pressure
Radiometric dating
- Half-life of carbon-14 is 5730 years
- Uranium-lead dating of zircon crystals
- Isochrons correct for initial daughter isotopes
## astronomy
Stellar evolution
- Main sequence stars fuse hydrogen
- Red giants fuse helium in the core
- White dwarfs beyond the Chandrasekhar limit
The Hertzsprung-Russell diagram
- Luminosity against surface temperature
- Giants sit above the main sequence
- Spectral classes O B A F G K M
Exoplanet detection
- Transit photometry measures dips in brightness
- Radial velocity reveals the stellar wobble
- Gravitational microlensing events
Cosmic microwave background
- Relic radiation at 2.725 kelvin
- Anisotropies seed galaxy formation
- Measured by COBE, WMAP and Planck
## psychology
Classical conditioning
- Pavlov paired a bell with food
- Extinction weakens the conditioned response
- Spontaneous recovery after a pause
Working memory
- Baddeley's phonological loop
- The visuospatial sketchpad
- Capacity of about four chunks
Cognitive dissonance
- Festinger's 1959 experiment
- Attitudes shift to match behaviour
- Effort justification
Developmental stages
- Piaget's sensorimotor stage
- Object permanence by eight months
- Formal operations in adolescence
## linguistics
Phonology basics
- Phonemes contrast meaning
- Allophones vary by context
- Minimal pairs like ship and sheep
Syntax trees
- Noun phrases and verb phrases
- X-bar theory heads and complements
- Movement leaves a trace
Language change
- Grimm's law shifted stops in Germanic
- The Great Vowel Shift in English
- Grammaticalisation of auxiliaries
## ecology
Trophic cascades
- Wolves in Yellowstone reduced elk browsing
- Sea otters protect kelp forests
- Top-down control of food webs
Nutrient cycling
- Nitrogen fixation by Rhizobium
- Denitrification returns nitrogen to the air
- Phosphorus cycles through rocks
Biodiversity hotspots
- Endemic species under threat
- Tropical Andes and Madagascar
- Habitat fragmentation and edge effects
## architecture
Gothic cathedrals
- Pointed arches and ribbed vaults
- Flying buttresses carry the thrust
- Stained glass at Chartres
Modernist architecture
- Form follows function
- Le Corbusier's five points
- Reinforced concrete frames
Sustainable building design
- Passive solar orientation
- Thermal mass stores heat
- Green roofs manage stormwater
## medicine
Antibiotic resistance
- Beta-lactamases cleave penicillin
- MRSA carries the mecA gene
- Stewardship limits unnecessary prescribing
## music
Orchestration
- Strings carry the melody in Romantic scores
- Brass doubles at climaxes
- Timbre changes with register
## astronomy
Kepler's laws of planetary motion
- Orbits are ellipses with the Sun at a focus
- Equal areas in equal times
- Period squared scales with axis cubed
## psychology
Signal detection theory
- Hits, misses, false alarms
- Sensitivity d-prime
- Criterion shifts with payoffs
"""

# Code slides (design mono-code): "@@ set" starts a set, "## field", then a title and its code lines.
CODE_TEXTS = r"""
@@ dev-code
## biology
Simulating logistic growth
def logistic(n0, r, k, steps):
    n = [n0]
    for _ in range(steps):
        n.append(n[-1] + r * n[-1] * (1 - n[-1] / k))
    return n
## linear algebra
Solving Ax = b with NumPy
import numpy as np
A = np.array([[4.0, 1.0], [2.0, 3.0]])
b = np.array([1.0, 2.0])
x = np.linalg.solve(A, b)
print(np.allclose(A @ x, b))
## statistics
Bootstrap confidence interval
rng = np.random.default_rng(seed=7)
means = [rng.choice(data, n).mean() for _ in range(2000)]
lo, hi = np.percentile(means, [2.5, 97.5])
print(f"95% CI: {lo:.2f} to {hi:.2f}")
## chemistry
Arrhenius rate constant
R = 8.314  # gas constant in J/(mol K)
def rate_constant(A, Ea, T):
    return A * math.exp(-Ea / (R * T))
k300 = rate_constant(1e13, 75000, 300)
## computer science
Binary search in a sorted list
def bisect_left(xs, target):
    lo, hi = 0, len(xs)
    while lo < hi:
        mid = (lo + hi) // 2
        if xs[mid] < target: lo = mid + 1
        else: hi = mid
    return lo
@@ sealed-code
## medicine
Querying ward admissions
SELECT ward, COUNT(*) AS admissions
FROM admissions
WHERE admitted_at >= DATE '2024-01-01'
GROUP BY ward
ORDER BY admissions DESC;
## music
Transposing a melody
const NOTES = ["C", "C#", "D", "D#", "E", "F"];
function transpose(melody, steps) {
  return melody.map(n =>
    NOTES[(NOTES.indexOf(n) + steps) % 12]);
}
## astronomy
Orbital period from Kepler's third law
fn period_years(semi_major_axis_au: f64) -> f64 {
    semi_major_axis_au.powf(1.5)
}
let mars = period_years(1.524);
"""

# Files typed in the screen-recording scenario.
EDITOR_FILES = {
    "dev": ("population.py", "python", r'''"""Age-structured population model (Leslie matrix)."""
import numpy as np

FECUNDITY = [0.0, 1.2, 1.6, 0.9]
SURVIVAL = [0.6, 0.75, 0.5]


def leslie_matrix(fecundity, survival):
    n = len(fecundity)
    L = np.zeros((n, n))
    L[0, :] = fecundity
    for i, s in enumerate(survival):
        L[i + 1, i] = s
    return L


def project(L, n0, years):
    counts = [np.asarray(n0, dtype=float)]
    for _ in range(years):
        counts.append(L @ counts[-1])
    return np.array(counts)


def growth_rate(L):
    eigenvalues = np.linalg.eigvals(L)
    return max(abs(eigenvalues))


if __name__ == "__main__":
    L = leslie_matrix(FECUNDITY, SURVIVAL)
    history = project(L, [100, 50, 30, 10], years=20)
    print("lambda =", round(growth_rate(L), 4))
    print(history[-1].round(1))'''),
    "sealed": ("triage.js", "js", r'''// Emergency triage score (simplified NEWS2)
const RANGES = {
  respiratoryRate: [[8, 3], [11, 1], [20, 0], [24, 2]],
  oxygenSaturation: [[91, 3], [93, 2], [95, 1]],
  heartRate: [[40, 3], [50, 1], [90, 0], [110, 1]],
};

function bandScore(value, bands) {
  for (const [limit, score] of bands) {
    if (value <= limit) return score;
  }
  return 3;
}

export function news2(patient) {
  let total = 0;
  for (const [sign, bands] of Object.entries(RANGES)) {
    total += bandScore(patient[sign], bands);
  }
  if (patient.newConfusion) total += 3;
  return total;
}

export const urgent = (p) => news2(p) >= 7;
export const watch = (p) => news2(p) >= 5 && !urgent(p);'''),
}


@dataclass(frozen=True)
class Text:
    """A slide's content: its field, title and lines."""

    field: str
    title: str
    lines: tuple[str, ...]


def parse_texts(src: str) -> list[Text]:
    """The slides of a text bank (``## field`` headers, title lines, ``- `` lines)."""
    out: list[Text] = []
    fld, title, lines = "", None, []
    for raw in src.splitlines():
        s = raw.strip()
        if not s:
            continue
        if s.startswith("## "):
            if title:
                out.append(Text(fld, title, tuple(lines)))
            fld, title, lines = s[3:], None, []
        elif s.startswith("- "):
            lines.append(s[2:])
        else:
            if title:
                out.append(Text(fld, title, tuple(lines)))
            title, lines = s, []
    if title:
        out.append(Text(fld, title, tuple(lines)))
    return out


def parse_code(src: str) -> dict[str, list[Text]]:
    """The code slides per set (``@@ set``, ``## field``, a title, then its code lines verbatim)."""
    sets: dict[str, list[Text]] = {}
    cur: list[Text] | None = None
    fld, title, lines = "", None, []

    def flush():
        if cur is not None and title:
            cur.append(Text(fld, title, tuple(lines)))

    for raw in src.splitlines():
        if not raw.strip():
            continue
        if raw.startswith("@@ "):
            flush()
            cur = sets.setdefault(raw[3:].strip().removesuffix("-code"), [])
            title, lines = None, []
        elif raw.startswith("## "):
            flush()
            fld, title, lines = raw[3:].strip(), None, []
        elif title is None:
            title = raw.strip()
        else:
            lines.append(raw.rstrip())
    flush()
    return sets


# ---------------------------------------------------------------- scoring

_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> set[str]:
    """The lower-cased words of ``text``: runs of letters or digits at least two long."""
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 2}


def normalise(text: str) -> str:
    """``text`` lower-cased with whitespace (newlines included) collapsed to single spaces."""
    return " ".join(text.lower().split())


def key_share(key: str, lines: Iterable[str]) -> float:
    """The share of ``key``'s words found among the words of ``lines`` (1.0 for a key without words)."""
    want = words(key)
    if not want:
        return 1.0
    return len(want & words(" ".join(lines))) / len(want)


def cer(truth: str, hyp: str) -> float:
    """Character error rate of ``hyp`` against ``truth`` after :func:`normalise` (1.0 when ``hyp`` is empty)."""
    import jiwer

    t, h = normalise(truth), normalise(hyp)
    if not h:
        return 1.0
    return float(jiwer.cer(t, h))


@dataclass
class Shown:
    """A slide as shown in a generated video: on screen from ``start_s`` to ``end_s``; ``key`` is
    what a detector must read for it to count as found, ``text`` everything readable on it."""

    start_s: float
    end_s: float
    key: str
    text: str
    design: str
    scenario: str = ""
    video: str = ""


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def match_slides(shown: list[Shown], detected: list, transitions: list[tuple[float, float]] = (),
                 min_share: float = MIN_KEY_SHARE) -> dict:
    """Scores ``detected`` slides (objects with ``start_s``, ``end_s``, ``lines``) against ``shown``.

    A pair can match when the detected slide overlaps the shown one in time and has read at least
    ``min_share`` of its key words; the matching is one to one and of maximum size (augmenting
    paths, larger overlap tried first). Unmatched detected slides lying at least half inside one of
    ``transitions`` ((start, end) seconds) are *transient*, the others *spurious*.

    Returns ``{"slides": [{"found", "cer", "detected"} per shown slide], "found", "shown",
    "spurious", "transient", "cer_mean"}``.
    """
    cands: list[list[int]] = []
    for s in shown:
        c = [(j, _overlap(s.start_s, s.end_s, d.start_s, d.end_s)) for j, d in enumerate(detected)]
        c = [(j, ov) for j, ov in c if ov > 0 and key_share(s.key, detected[j].lines) >= min_share]
        c.sort(key=lambda x: -x[1])
        cands.append([j for j, _ in c])
    owner: dict[int, int] = {}  # detected index -> shown index

    def augment(i: int, seen: set[int]) -> bool:
        for j in cands[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(shown)):
        augment(i, set())
    by_shown = {i: j for j, i in owner.items()}
    slides = []
    cers = []
    for i, s in enumerate(shown):
        j = by_shown.get(i)
        if j is None:
            slides.append({"found": False, "cer": None, "detected": None})
        else:
            c = cer(s.text, " ".join(detected[j].lines))
            cers.append(c)
            slides.append({"found": True, "cer": round(c, 4), "detected": j})
    spurious = transient = 0
    for j, d in enumerate(detected):
        if j in owner:
            continue
        dur = max(1e-6, d.end_s - d.start_s)
        inside = sum(_overlap(d.start_s, d.end_s, a, b) for a, b in transitions)
        if inside >= 0.5 * dur:
            transient += 1
        else:
            spurious += 1
    return {"slides": slides, "found": len(by_shown), "shown": len(shown), "spurious": spurious,
            "transient": transient, "cer_mean": (sum(cers) / len(cers)) if cers else None}


# ---------------------------------------------------------------- videos

Frame = np.ndarray  # H x W x 3 uint8


@dataclass
class Segment:
    """``n`` frames; ``frame(k)`` draws the k-th (0-based) of them; ``static`` when all are the same."""

    n: int
    frame: Callable[[int], Frame]
    static: bool


@dataclass
class Video:
    """A generated video: how to draw it and what it shows."""

    name: str
    scenario: str
    design: str
    size: tuple[int, int]
    fps: int
    segments: list[Segment] = field(default_factory=list)
    overlays: list[Callable[[Frame, int], Frame]] = field(default_factory=list)  # (frame, global index) -> frame
    shown: list[Shown] = field(default_factory=list)
    transitions: list[tuple[float, float]] = field(default_factory=list)
    spec: list = field(default_factory=list)  # everything that draws it, for the cache key

    @property
    def n_frames(self) -> int:
        return sum(s.n for s in self.segments)

    @property
    def duration_s(self) -> float:
        return self.n_frames / self.fps

    @property
    def t(self) -> float:
        """The end of the video so far (seconds)."""
        return self.duration_s

    def frames_for(self, seconds: float) -> int:
        return max(1, round(seconds * self.fps))

    def add(self, seg: Segment) -> tuple[float, float]:
        t0 = self.t
        self.segments.append(seg)
        return t0, self.t

    def cache_key(self) -> str:
        blob = json.dumps([GEN_VERSION, self.name, self.scenario, self.size, self.fps, self.spec,
                           [asdict(s) for s in self.shown], self.transitions], sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _arr(img: Image.Image) -> Frame:
    return np.asarray(img.convert("RGB"), dtype=np.uint8)


def _slide(v: Video, design: str, title: str, lines: list[str], *, seed: int = 0, footer: str = "",
           page: int | None = None, size: tuple[int, int] | None = None) -> tuple[Frame, list[str]]:
    img, text = render_slide_with_text(design, title, list(lines), size or v.size, footer=footer, page=page, seed=seed)
    v.spec.append(["slide", design, title, list(lines), seed, footer, page])
    return _arr(img), text


def _still(v: Video, frame: Frame, seconds: float) -> tuple[float, float]:
    n = v.frames_for(seconds)
    v.spec.append(["still", n])
    return v.add(Segment(n, lambda k, f=frame: f, True))


def _dissolve(v: Video, a: Frame, b: Frame, seconds: float) -> tuple[float, float]:
    n = v.frames_for(seconds)
    v.spec.append(["dissolve", n])
    af, bf = a.astype(np.float32), b.astype(np.float32)

    def frame(k: int) -> Frame:
        w = (k + 1) / (n + 1)
        return (af * (1 - w) + bf * w + 0.5).astype(np.uint8)

    return v.add(Segment(n, frame, False))


def _show(v: Video, start: float, end: float, key: str, text: list[str], design: str | None = None) -> None:
    assert words(key), f"a shown slide needs a key with words: {key!r}"
    v.shown.append(Shown(round(start, 3), round(end, 3), key, "\n".join(text), design or v.design, v.scenario, v.name))


def _uniform(frame: Frame, box: tuple[int, int, int, int]) -> bool:
    x0, y0, x1, y1 = box
    region = frame[y0:y1, x0:x1].reshape(-1, 3)
    return bool((region == region[0]).all())


# ---- overlays

def pip_box(size: tuple[int, int], corner: str) -> tuple[int, int, int, int]:
    """The speaker picture's box (x0, y0, x1, y1) in a frame of ``size``: 24 % × 27 %, in ``corner``
    ("br" bottom right or "bl" bottom left), 2 % from the edges."""
    w, h = size
    pw, ph = round(w * 0.24) // 2 * 2, round(h * 0.27) // 2 * 2
    m = round(w * 0.02)
    x0 = w - m - pw if corner == "br" else m
    y0 = h - m - ph
    return x0, y0, x0 + pw, y0 + ph


def pip_overlay(size: tuple[int, int], corner: str, seed: int) -> Callable[[Frame, int], Frame]:
    """A synthetic speaker: a wall gradient, a head and shoulders that sway, a mouth that opens and
    closes, eyes that blink, and camera noise, different in every frame."""
    x0, y0, x1, y1 = pip_box(size, corner)
    pw, ph = x1 - x0, y1 - y0
    rnd = random.Random(seed)
    wall = np.linspace(rnd.randint(60, 110), rnd.randint(130, 190), pw, dtype=np.float32)
    wall = np.stack([wall * 0.9, wall * 0.95, wall * 1.05], axis=-1)[None, :, :].repeat(ph, 0)
    skin = (rnd.randint(180, 235), rnd.randint(140, 180), rnd.randint(110, 150))
    shirt = (rnd.randint(20, 90), rnd.randint(40, 120), rnd.randint(80, 160))
    ph1, ph2 = rnd.uniform(0, 6), rnd.uniform(0, 6)

    def overlay(frame: Frame, k: int) -> Frame:
        t = k / 12.0
        cx = pw * (0.5 + 0.12 * math.sin(0.7 * t + ph1) + 0.03 * math.sin(3.1 * t))
        cy = ph * (0.45 + 0.04 * math.sin(1.3 * t + ph2))
        img = Image.fromarray(np.clip(wall, 0, 255).astype(np.uint8))
        d = ImageDraw.Draw(img)
        r = ph * 0.22
        d.ellipse((cx - r * 2.2, cy + r * 1.5, cx + r * 2.2, cy + r * 4.5), fill=shirt)
        d.ellipse((cx - r * 0.8, cy - r, cx + r * 0.8, cy + r * 1.1), fill=skin)
        blink = (k % 40) < 2
        for ex in (-0.32, 0.32):
            if blink:
                d.line((cx + ex * r - 5, cy - r * 0.2, cx + ex * r + 5, cy - r * 0.2), fill=(40, 30, 30), width=2)
            else:
                d.ellipse((cx + ex * r - 4, cy - r * 0.28, cx + ex * r + 4, cy - r * 0.12), fill=(40, 30, 30))
        mouth = abs(math.sin(5.0 * t + 0.8 * math.sin(1.7 * t))) * r * 0.25
        d.ellipse((cx - r * 0.28, cy + r * 0.45, cx + r * 0.28, cy + r * 0.5 + mouth), fill=(120, 40, 40))
        noise = np.random.default_rng(seed * 100003 + k).normal(0, 5, (ph, pw, 3))
        patch = np.clip(np.asarray(img, dtype=np.float32) + noise, 0, 255).astype(np.uint8)
        out = frame.copy()
        out[y0:y1, x0:x1] = patch
        return out

    return overlay


def pointer_overlay(size: tuple[int, int], fps: int, seed: int) -> Callable[[Frame, int], Frame]:
    """A red laser-pointer dot gliding over the slide (pausing now and then) and, part of the time, a
    mouse arrow."""
    w, h = size
    rnd = random.Random(seed)
    a, b, p = rnd.uniform(0.2, 0.5), rnd.uniform(0.3, 0.7), rnd.uniform(0, 6)

    def pos(t: float) -> tuple[float, float]:
        s = t - 0.6 * math.sin(0.8 * t)  # slows down, nearly stops, speeds up
        return (w * (0.5 + 0.38 * math.sin(a * s + p)), h * (0.5 + 0.36 * math.sin(b * s)))

    def overlay(frame: Frame, k: int) -> Frame:
        t = k / fps
        img = Image.fromarray(frame)
        d = ImageDraw.Draw(img)
        x, y = pos(t)
        r = max(6, h // 70)
        d.ellipse((x - r * 1.8, y - r * 1.8, x + r * 1.8, y + r * 1.8), fill=(255, 150, 150))
        d.ellipse((x - r, y - r, x + r, y + r), fill=(230, 20, 20))
        if (t // 6) % 2 == 1:  # the mouse arrow, every other 6 s
            mx, my = w * (0.3 + 0.25 * math.sin(0.5 * t)), h * (0.6 + 0.2 * math.cos(0.4 * t))
            s = max(1.0, h / 540)
            pts = [(0, 0), (0, 22), (6, 17), (10, 26), (14, 24), (10, 15), (17, 15)]
            d.polygon([(mx + px * s, my + py * s) for px, py in pts], fill=(255, 255, 255), outline=(0, 0, 0))
        return np.asarray(img)

    return overlay


# ---- editor (screen recording)

_KEYWORDS = {
    "python": {"def", "return", "for", "in", "if", "import", "as", "from", "while", "else", "class", "not", "and",
               "or", "None", "True", "False"},
    "js": {"const", "let", "function", "return", "for", "of", "if", "export", "new", "else"},
}
_EDITOR_TOKEN = re.compile(r'(#.*|//.*)|("[^"]*"?|\'[^\']*\'?)|(\b\d+(?:\.\d+)?\b)|(\w+)|(\s+)|(.)')


class Editor:
    """A dark code editor of ``size``: a tab with the file name, a line-number gutter, syntax colours
    and a caret. :meth:`draw` renders a state, returning the frame and its visible text lines."""

    def __init__(self, size: tuple[int, int], filename: str, lang: str, code: list[str]):
        self.size, self.filename, self.lang, self.code = size, filename, lang, code
        w, h = size
        self.px = round(h * 22 / 720)
        self.font = _font(MONO, self.px)
        self.tab_font = _font(SANS, round(h * 17 / 720))
        self.row_h = round(self.px * 1.45)
        self.top = round(h * 0.085)
        self.rows = (h - self.top - round(h * 0.05)) // self.row_h
        self.char_w = self.font.getlength("M")
        self.gutter = round(self.char_w * 5)

    @lru_cache(maxsize=512)
    def draw(self, n_full: int, partial: int, scroll: int, caret: bool) -> tuple[Frame, tuple[str, ...]]:
        """The editor with the first ``n_full`` lines complete and ``partial`` characters of the next
        one typed, showing lines from ``scroll``, with or without the caret."""
        w, h = self.size
        img = Image.new("RGB", self.size, (30, 30, 30))
        d = ImageDraw.Draw(img)
        d.rectangle((0, 0, w, self.top - 8), fill=(37, 37, 38))
        tab_w = self.tab_font.getlength(self.filename) + 40
        d.rectangle((0, 0, tab_w, self.top - 8), fill=(30, 30, 30))
        d.rectangle((0, 0, tab_w, 2), fill=(0, 122, 204))
        d.text((20, (self.top - 8 - self.tab_font.size) / 2 - 2), self.filename, font=self.tab_font,
               fill=(230, 230, 230))
        d.rectangle((0, h - round(h * 0.035), w, h), fill=(0, 122, 204))
        text = [self.filename]
        existing = n_full + (1 if partial > 0 or n_full < len(self.code) else 0)
        existing = min(existing, len(self.code))
        colours = {1: (106, 153, 85), 2: (206, 145, 120), 3: (181, 206, 168)}
        for r in range(self.rows):
            i = scroll + r
            if i >= existing:
                break
            y = self.top + r * self.row_h
            line = self.code[i] if i < n_full else self.code[i][:partial]
            num = str(i + 1)
            d.text((self.gutter - 14 - self.font.getlength(num), y), num, font=self.font, fill=(133, 133, 133))
            col = 0
            for m in _EDITOR_TOKEN.finditer(line):
                tok = m.group(0)
                kind = m.lastindex
                if kind == 4 and tok in _KEYWORDS[self.lang]:
                    fill = (197, 134, 192)
                elif kind in colours:
                    fill = colours[kind]
                else:
                    fill = (212, 212, 212)
                if kind != 5:
                    d.text((self.gutter + col * self.char_w, y), tok, font=self.font, fill=fill)
                col += len(tok)
            if caret and i == min(n_full, len(self.code) - 1):
                cx = self.gutter + (partial if i == n_full else len(line)) * self.char_w
                d.rectangle((cx, y + 2, cx + 2, y + self.row_h - 4), fill=(220, 220, 220))
            text.append(f"{num} {line}".rstrip())
        return _arr(img), tuple(text)


def _editor_video(v: Video, filename: str, lang: str, code_src: str, seed: int) -> None:
    code = code_src.splitlines()
    ed = Editor(v.size, filename, lang, code)
    rnd = random.Random(seed)
    cps = 20.0  # typed characters per second
    v.spec.append(["editor", filename, code_src, seed, ed.rows])
    state = {"n_full": rnd.randint(4, 6), "scroll": 0, "prev_visible": set()}

    def scroll_for(n_full: int) -> int:
        return max(0, n_full - ed.rows + 2)

    def hold(seconds: float, max_key_lines: int = 4) -> None:
        n_full, scroll = state["n_full"], state["scroll"]
        n = v.frames_for(seconds)
        blink = max(1, round(v.fps * 0.5))
        frames = [ed.draw(n_full, 0, scroll, on)[0] for on in (True, False)]
        t0, t1 = v.add(Segment(n, lambda k: frames[(k // blink) % 2], False))
        visible = list(range(scroll, min(scroll + ed.rows, n_full)))
        new = [i for i in visible if i not in state["prev_visible"] and words(code[i])][:max_key_lines]
        _show(v, t0, t1, " ".join(code[i] for i in new), list(ed.draw(n_full, 0, scroll, False)[1]))
        state["prev_visible"] = set(visible)

    def type_lines(count: int) -> None:
        t0 = v.t
        for _ in range(count):
            i = state["n_full"]
            if i >= len(code):
                break
            line = code[i]
            steps = max(1, math.ceil(len(line) / cps * v.fps))
            sc = scroll_for(i + 1)

            def frame(k: int, i=i, line=line, steps=steps, sc=sc) -> Frame:
                typed = min(len(line), math.ceil((k + 1) * len(line) / steps))
                return ed.draw(i, typed, sc, True)[0]

            v.add(Segment(steps, frame, False))
            state["n_full"] = i + 1
            state["scroll"] = sc
            pause = v.frames_for(rnd.uniform(0.2, 0.6))
            v.add(Segment(pause, lambda k, i=i, sc=sc: ed.draw(i + 1, 0, sc, True)[0], False))
        v.transitions.append((round(t0, 3), round(v.t, 3)))

    hold(rnd.uniform(4.0, 6.0))
    while state["n_full"] < len(code):
        group = rnd.choice([1, 2, 2, 3])
        # never let a group end on a blank line only
        while state["n_full"] + group < len(code) and not words(" ".join(code[state["n_full"]:state["n_full"] + group])):
            group += 1
        type_lines(group)
        hold(rnd.uniform(3.5, 6.0))
    # scroll smoothly back to the top, then page down to the middle
    t0 = v.t
    start = state["scroll"]
    n = v.frames_for(0.6)
    v.add(Segment(n, lambda k: ed.draw(len(code), 0, round(start * (1 - (k + 1) / n)), False)[0], False))
    v.transitions.append((round(t0, 3), round(v.t, 3)))
    state["scroll"] = 0
    hold(rnd.uniform(4.0, 6.0))
    state["scroll"] = min(len(code) - ed.rows, ed.rows // 2 + rnd.randint(0, 2))
    hold(rnd.uniform(4.0, 6.0))


# ---------------------------------------------------------------- scenarios

class Pool:
    """The slide texts of one set, handed out in a seeded order, each at most once."""

    def __init__(self, name: str, seed: int):
        self.prose = parse_texts(DEV_TEXTS if name == "dev" else SEALED_TEXTS)
        self.code = parse_code(CODE_TEXTS)[name]
        random.Random(seed).shuffle(self.prose)

    def take(self, n: int, *, max_lines: int = 5, fits: Callable[[Text], bool] = lambda t: True) -> list[Text]:
        out = []
        for t in list(self.prose):
            if len(out) == n:
                break
            if len(t.lines) <= max_lines and fits(t):
                out.append(t)
                self.prose.remove(t)
        if len(out) < n:
            raise RuntimeError(f"the slide-text pool ran out ({len(out)} of {n})")
        return out

    def take_code(self, n: int) -> list[Text]:
        out, self.code = self.code[:n], self.code[n:]
        if len(out) < n:
            raise RuntimeError("the code-slide pool ran out")
        return out


_FOOTERS = {"dev": "Lecture notes, Spring term", "sealed": "Open course materials"}


def deck_video(name: str, scenario: str, design: str, size: tuple[int, int], fps: int, texts: list[Text],
               rnd: random.Random, set_name: str, *, fade_s: float = 0.0, title_slide: tuple[str, str] | None = None,
               dur: tuple[float, float] = (8.0, 15.0)) -> Video:
    """A deck in one design: each text a slide for ``dur`` seconds (uniform), hard cuts or ``fade_s`` dissolves;
    optionally opening with a title slide (title, subtitle)."""
    v = Video(name, scenario, design, size, fps)
    slides: list[tuple[Frame, list[str], str]] = []
    if title_slide:
        f, text = _slide(v, design, title_slide[0], [title_slide[1]], seed=rnd.randint(0, 999),
                         footer=_FOOTERS[set_name], page=1)
        slides.append((f, text, title_slide[0]))
    for k, t in enumerate(texts):
        f, text = _slide(v, design, t.title, list(t.lines), seed=rnd.randint(0, 999), footer=_FOOTERS[set_name],
                         page=len(slides) + 1)
        slides.append((f, text, t.title))
    prev = None
    for k, (f, text, key) in enumerate(slides):
        seconds = rnd.uniform(*dur)
        if prev is not None and fade_s > 0:
            t0, t1 = _dissolve(v, prev, f, fade_s)
            v.transitions.append((round(t0, 3), round(t1, 3)))
            v.shown[-1].end_s = round((t0 + t1) / 2, 3)
            start = (t0 + t1) / 2
            _, end = _still(v, f, seconds)
        else:
            start, end = _still(v, f, seconds)
        _show(v, start, end, key, text)
        prev = f
    return v


def build_video(name: str, design: str, size: tuple[int, int], fps: int, texts: list[Text], rnd: random.Random,
                set_name: str) -> Video:
    """Slide builds: each text's slide appears with its title and first line, then one more line at a
    time; every step is a shown slide keyed by what it added (the title for the first), its text the
    title and the added line."""
    v = Video(name, "builds", design, size, fps)
    page = 1
    for t in texts:
        seed = rnd.randint(0, 999)
        for k in range(1, len(t.lines) + 1):
            f, text = _slide(v, design, t.title, list(t.lines[:k]), seed=seed, footer=_FOOTERS[set_name], page=page)
            start, end = _still(v, f, rnd.uniform(6.0, 11.0))
            # a build step is read as its title and the line it added (services.transcribe.slides: each
            # line is cited where it appeared), so that is the text its CER is measured against
            _show(v, start, end, t.title if k == 1 else t.lines[k - 1], text if k == 1 else [t.title, t.lines[k - 1]])
        page += 1
    return v


def sparse_video(name: str, design: str, size: tuple[int, int], fps: int, texts: list[Text], rnd: random.Random,
                 set_name: str, per_text: int) -> Video:
    """Sparse slides: the same title over one short line at a time (the first ``per_text`` lines of each
    text in turn), so a change is one line of text; each slide is keyed by its line."""
    v = Video(name, "sparse-text", design, size, fps)
    for t in texts:
        seed = rnd.randint(0, 999)
        for line in t.lines[:per_text]:
            f, text = _slide(v, design, t.title, [line], seed=seed, footer=_FOOTERS[set_name])
            start, end = _still(v, f, rnd.uniform(8.0, 15.0))
            _show(v, start, end, line, text)
    return v


def pip_fits(design: str, size: tuple[int, int], corner: str) -> Callable[[Text], bool]:
    """Whether a text's slide leaves the speaker picture's box (with a margin) empty."""
    x0, y0, x1, y1 = pip_box(size, corner)
    box = (max(0, x0 - 10), max(0, y0 - 10), min(size[0], x1 + 10), min(size[1], y1 + 10))

    def fits(t: Text) -> bool:
        img, _ = render_slide_with_text(design, t.title, list(t.lines), size)
        return _uniform(_arr(img), box)

    return fits


def pip_video(name: str, design: str, size: tuple[int, int], fps: int, texts: list[Text], rnd: random.Random,
              set_name: str, corner: str, seed: int, scenario: str = "pip", dur=(8.0, 15.0)) -> Video:
    """A deck with a speaker picture-in-picture in ``corner`` over it."""
    v = deck_video(name, scenario, design, size, fps, texts, rnd, set_name, dur=dur)
    v.overlays.append(pip_overlay(size, corner, seed))
    v.spec.append(["pip", corner, seed])
    return v


def scenarios(set_name: str) -> list[Callable[[], Video]]:
    """The videos of ``set_name`` (``dev``, ``sealed``, ``quick``) as functions that build them (cheap to list,
    rendered only when called)."""
    if set_name == "quick":
        def q_plain() -> Video:
            pool = Pool("dev", 7)
            return deck_video("quick-plain", "text-changes", "plain", (960, 540), 4, pool.take(3), random.Random(8),
                              "dev", dur=(8.0, 10.0))

        def q_pip() -> Video:
            pool = Pool("dev", 9)
            return pip_video("quick-pip", "plain", (960, 540), 12, pool.take(3, max_lines=4,
                             fits=pip_fits("plain", (960, 540), "br")), random.Random(10), "dev", "br", 11,
                             dur=(8.0, 10.0))

        return [q_plain, q_pip]

    dev = set_name == "dev"
    base = 1000 if dev else 5000
    pool = Pool(set_name, base)
    rnd = random.Random(base + 1)
    per_design = 4 if dev else 2
    sizes = {"plain-small": (1920, 1080), "template": (1280, 720), "serif-cream": (1280, 720)}
    fps_cycle = [4, 5, 3, 4] if dev else [5, 4, 3, 5]
    plan: list[Callable[[], Video]] = []

    # allocate texts now, so the videos do not depend on which of them run
    for i, design in enumerate(DESIGNS):
        size = sizes.get(design, (960, 540))
        texts = pool.take_code(per_design) if design == "mono-code" else pool.take(per_design, max_lines=4)
        fps = fps_cycle[i % len(fps_cycle)]
        seed = rnd.randint(0, 10**6)
        plan.append(lambda d=design, s=size, t=texts, f=fps, sd=seed:
                    deck_video(f"{set_name}-text-{d}", "text-changes", d, s, f, t, random.Random(sd), set_name))

    b_specs = [("plain", (960, 540), 2), ("template", (1280, 720), 2)] if dev else [("dark", (1280, 720), 2)]
    for design, size, n in b_specs:
        texts = pool.take(n, max_lines=4)
        seed = rnd.randint(0, 10**6)
        plan.append(lambda d=design, s=size, t=texts, sd=seed:
                    build_video(f"{set_name}-builds-{d}", d, s, 4, t, random.Random(sd), set_name))

    texts = pool.take(5 if dev else 3)
    seed = rnd.randint(0, 10**6)
    plan.append(lambda t=texts, sd=seed: deck_video(f"{set_name}-small-text", "small-text", "plain-small",
                                                    (1920, 1080), 4, t, random.Random(sd), set_name))

    pip_design, corner = ("plain", "br") if dev else ("serif-cream", "bl")
    texts = pool.take(6 if dev else 4, max_lines=4, fits=pip_fits(pip_design, (1280, 720), corner))
    seed = rnd.randint(0, 10**6)
    plan.append(lambda t=texts, sd=seed, d=pip_design, c=corner:
                pip_video(f"{set_name}-pip-{d}", d, (1280, 720), 12, t, random.Random(sd), set_name, c, sd % 997))

    filename, lang, code = EDITOR_FILES[set_name]
    seed = rnd.randint(0, 10**6)

    def editor(sd: int = seed) -> Video:
        v = Video(f"{set_name}-screen-recording", "screen-recording", "editor", (1280, 720), 10)
        _editor_video(v, filename, lang, code, sd)
        return v

    plan.append(editor)

    cur_design = "dark" if dev else "plain"
    texts = pool.take(3 if dev else 2, max_lines=4)
    seed = rnd.randint(0, 10**6)

    def cursor(t=texts, sd=seed, d=cur_design) -> Video:
        v = deck_video(f"{set_name}-cursor-{d}", "cursor", d, (1280, 720), 10, t, random.Random(sd), set_name,
                       dur=(12.0, 15.0))
        v.overlays.append(pointer_overlay(v.size, v.fps, sd % 991))
        v.spec.append(["pointer", sd % 991])
        return v

    plan.append(cursor)

    fade_design = "serif-cream" if dev else "template"
    texts = pool.take(6 if dev else 4, max_lines=4)
    seed = rnd.randint(0, 10**6)
    plan.append(lambda t=texts, sd=seed, d=fade_design:
                deck_video(f"{set_name}-fade-{d}", "fade", d, (960, 540), 10, t, random.Random(sd), set_name,
                           fade_s=0.5))

    decks = {"dev": [("dark-deck", "dark", ("Foundations of Modern Science", "Lecture 3, part two")),
                     ("light-deck", "plain", ("Quantitative Methods Review", "Week 5 recap"))],
             "sealed": [("dark-deck", "dark", ("Clinical Reasoning Seminar", "Session 2")),
                        ("light-deck", "plain", ("Introduction to Earth Sciences", "Unit 4 overview"))]}[set_name]
    for scen, design, title in decks:
        texts = pool.take(5 if dev else 3, max_lines=4)
        seed = rnd.randint(0, 10**6)
        plan.append(lambda sc=scen, d=design, ti=title, t=texts, sd=seed:
                    deck_video(f"{set_name}-{sc}", sc, d, (1280, 720), 5, t, random.Random(sd), set_name,
                               title_slide=ti))
    texts = pool.take(2)
    seed = rnd.randint(0, 10**6)
    plan.append(lambda t=texts, sd=seed: sparse_video(f"{set_name}-sparse-plain", "plain", (960, 540), 4, t,
                                                      random.Random(sd), set_name, 3 if dev else 2))

    return plan


def cost_video() -> Video:
    """Five minutes of 1920×1080 at 25 fps: a slide about every 10 s (three light and dark designs), a
    speaker picture in the bottom-right corner."""
    pool = Pool("dev", 4242)
    rnd = random.Random(4243)
    size = (1920, 1080)
    v = Video("cost-1080p25", "cost", "mixed", size, 25)
    designs = ["plain", "dark", "serif-cream"]
    fits = {d: pip_fits(d, size, "br") for d in designs}
    k = 0
    while v.t < 290.0:
        d = designs[k % 3]
        t = pool.take(1, max_lines=4, fits=fits[d])[0]
        f, text = _slide(v, d, t.title, list(t.lines), seed=k, size=size)
        start, end = _still(v, f, rnd.uniform(9.0, 11.0))
        _show(v, start, end, t.title, text, d)
        k += 1
    v.overlays.append(pip_overlay(size, "br", 77))
    v.spec.append(["pip", "br", 77])
    return v


# ---------------------------------------------------------------- encoding

def encode(v: Video, out: Path) -> None:
    """Draws ``v`` frame by frame into ``out``: H.264 (libx264 veryfast, CRF 23, yuv420p) and a silent
    AAC track, via a temporary file renamed at the end."""
    w, h = v.size
    tmp = out.with_suffix(".part.mp4")
    cmd = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w}x{h}",
           "-r", str(v.fps), "-i", "pipe:0", "-f", "lavfi", "-i", "anullsrc=r=44100:cl=stereo",
           "-t", f"{v.duration_s:.3f}", "-map", "0:v", "-map", "1:a", "-c:v", "libx264", "-preset", "veryfast",
           "-crf", "23", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "64k", "-movflags", "+faststart", str(tmp)]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    k = 0
    try:
        for seg in v.segments:
            cached: bytes | None = None
            for i in range(seg.n):
                if seg.static and not v.overlays:
                    if cached is None:
                        cached = np.ascontiguousarray(seg.frame(0)).tobytes()
                    proc.stdin.write(cached)
                else:
                    f = seg.frame(i)
                    for ov in v.overlays:
                        f = ov(f, k)
                    proc.stdin.write(np.ascontiguousarray(f).tobytes())
                k += 1
        proc.stdin.close()
    except BrokenPipeError:
        pass
    err = proc.stderr.read().decode(errors="replace")
    if proc.wait() != 0:
        raise RuntimeError(f"ffmpeg failed on {v.name}: {err[-500:]}")
    tmp.rename(out)


def video_file(v: Video) -> Path:
    """The cached MP4 of ``v`` (made now when missing)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    out = CACHE / f"{v.name}-{v.cache_key()}.mp4"
    if not out.exists():
        t0 = time.perf_counter()
        encode(v, out)
        print(f"  made {out.name} ({v.duration_s:.0f} s, {v.size[0]}x{v.size[1]} @ {v.fps} fps) in "
              f"{time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return out


# ---------------------------------------------------------------- running the detector

class Detector:
    """``detect_slides`` from the repository or from the file ``module``, with its OCR calls counted."""

    def __init__(self, module: str | None):
        if module:
            path = Path(module).resolve()
            spec = importlib.util.spec_from_file_location("slides_under_test", path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules["slides_under_test"] = mod
            spec.loader.exec_module(mod)
            self.label = str(module)
        else:
            import services.transcribe.slides as mod

            self.label = "services/transcribe/slides.py"
        self.mod = mod
        self.calls = 0
        self.logged: list[int] = []
        if callable(getattr(mod, "ocr_lines", None)):
            inner = mod.ocr_lines

            def counted(*a, **kw):
                self.calls += 1
                return inner(*a, **kw)

            mod.ocr_lines = counted
        logger = getattr(mod, "log", None)
        if isinstance(logger, logging.Logger):
            outer = self

            class _Count(logging.Handler):
                def emit(self, record):
                    m = re.search(r"(\d+) OCR calls", record.getMessage())
                    if m:
                        outer.logged.append(int(m.group(1)))

            logger.setLevel(logging.INFO)
            logger.addHandler(_Count())

    def __call__(self, path: Path, duration_s: float) -> tuple[list, float, int | None]:
        """The detected slides, the wall time (s) and the OCR calls (None when unknown)."""
        self.calls, self.logged = 0, []
        t0 = time.perf_counter()
        found = self.mod.detect_slides(path, duration_s=duration_s)
        took = time.perf_counter() - t0
        calls = self.calls or (sum(self.logged) if self.logged else None)
        return list(found), took, calls


def warm_up(det: Detector) -> None:
    """One untimed call on a 3-second video, so model loading is not timed."""
    v = Video("warmup", "warmup", "plain", (960, 540), 4)
    f, text = _slide(v, "plain", "Warm up slide", ["Loading the OCR model"])
    _still(v, f, 3.0)
    det(video_file(v), v.duration_s)


def run_video(det: Detector, v: Video) -> dict:
    """Generates (or finds) ``v``, runs the detector on it and scores it."""
    path = video_file(v)
    found, took, calls = det(path, v.duration_s)
    sc = match_slides(v.shown, found, v.transitions)
    return {
        "video": v.name, "scenario": v.scenario, "design": v.design, "size": list(v.size), "fps": v.fps,
        "duration_s": round(v.duration_s, 2), "file": path.name, "detect_s": round(took, 2), "ocr_calls": calls,
        "shown": sc["shown"], "found": sc["found"], "spurious": sc["spurious"], "transient": sc["transient"],
        "slides": [{**asdict(s), **r} for s, r in zip(v.shown, sc["slides"])],
        "detected": [{"start_s": round(d.start_s, 2), "end_s": round(d.end_s, 2), "lines": list(d.lines)}
                     for d in found],
    }


def aggregate(videos: list[dict], slide_filter: Callable[[dict], bool] = lambda s: True,
              video_filter: Callable[[dict], bool] = lambda v: True) -> dict:
    """Totals over ``videos`` (results of :func:`run_video`): recall, mean CER, spurious, transient, OCR
    calls and detector seconds per video minute."""
    slides = [s for v in videos for s in v["slides"] if slide_filter(s)]
    vids = [v for v in videos if video_filter(v)]
    found = [s for s in slides if s["found"]]
    minutes = sum(v["duration_s"] for v in vids) / 60
    detect = sum(v["detect_s"] for v in vids)
    calls = [v["ocr_calls"] for v in vids]
    return {
        "videos": len(vids), "video_min": round(minutes, 2), "shown": len(slides), "found": len(found),
        "recall": round(len(found) / len(slides), 4) if slides else None,
        "cer": round(sum(s["cer"] for s in found) / len(found), 4) if found else None,
        "spurious": sum(v["spurious"] for v in vids), "transient": sum(v["transient"] for v in vids),
        "ocr_calls": sum(calls) if calls and all(c is not None for c in calls) else None,
        "detect_s": round(detect, 1), "s_per_video_min": round(detect / minutes, 2) if minutes else None,
    }


def summarise(videos: list[dict]) -> dict:
    """Totals, per design and per scenario."""
    designs = sorted({s["design"] for v in videos for s in v["slides"]} | {v["design"] for v in videos})
    scen = sorted({v["scenario"] for v in videos})
    return {
        "total": aggregate(videos),
        "by_design": {d: aggregate(videos, lambda s, d=d: s["design"] == d, lambda v, d=d: v["design"] == d)
                      for d in designs},
        "by_scenario": {c: aggregate(videos, lambda s, c=c: s["scenario"] == c, lambda v, c=c: v["scenario"] == c)
                        for c in scen},
    }


# ---------------------------------------------------------------- reporting

_COLS = [("videos", "videos"), ("video_min", "video min"), ("shown", "shown"), ("found", "found"),
         ("recall", "recall"), ("cer", "CER"), ("spurious", "spurious"), ("transient", "transient"),
         ("ocr_calls", "OCR calls"), ("s_per_video_min", "s / video min")]


def _fmt(x) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.3f}" if abs(x) < 10 else f"{x:.1f}"
    return str(x)


def table(rows: dict[str, dict], first: str) -> list[str]:
    """A markdown table: one row per entry of ``rows`` (name -> :func:`aggregate` result)."""
    out = [f"| {first} | " + " | ".join(h for _, h in _COLS) + " |",
           "|" + "---|" * (len(_COLS) + 1)]
    for name, r in rows.items():
        out.append(f"| {name} | " + " | ".join(_fmt(r.get(k)) for k, _ in _COLS) + " |")
    return out


def markdown(entries: dict[str, dict]) -> str:
    """``slides.md``: every entry of ``slides-latest.json`` as tables (``sealed``: totals only)."""
    lines = ["# Slide detection benchmark (evals.slides_bench)", "",
             "Generated videos with known slide timelines; see the docstring of `evals/slides_bench.py` for what "
             "is measured. One section per set and detector; each run replaces its own section.", ""]
    for key in sorted(entries):
        e = entries[key]
        lines += [f"## {e['set']} — {e['detector']}", "", f"`{e['command']}`", "",
                  f"{e['when']}, git {e['git']}, load average {e['loadavg']}, {e['cpus']} CPUs", ""]
        if e["set"] == "cost":
            lines += [*table({e["videos"][0]["video"]: e["summary"]["total"]}, "video"), ""]
            continue
        lines += [*table({"total": e["summary"]["total"]}, "set"), ""]
        if e["set"] != "sealed":
            lines += [*table(e["summary"]["by_scenario"], "scenario"), "",
                      *table(e["summary"]["by_design"], "design"), ""]
    return "\n".join(lines) + "\n"


def save(entry: dict) -> None:
    """Stores ``entry`` in ``slides-latest.json`` (replacing the same set and detector) and rewrites ``slides.md``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "slides-latest.json"
    entries = json.loads(path.read_text())["entries"] if path.exists() else {}
    entries[f"{entry['set']}|{entry['detector']}"] = entry
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"entries": entries}, indent=1) + "\n")
    tmp.rename(path)
    (RESULTS / "slides.md").write_text(markdown(entries))


def _git() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
        dirty = subprocess.run(["git", "status", "--porcelain", "services/transcribe/slides.py"], cwd=ROOT,
                               capture_output=True, text=True).stdout
        return head.strip() + (" (slides.py modified)" if dirty.strip() else "")
    except OSError:
        return "?"


def run_set(det: Detector, set_name: str, command: str) -> dict:
    """Runs and scores every video of ``set_name``; stores and returns the entry."""
    videos = []
    for make in scenarios(set_name):
        v = make()
        r = run_video(det, v)
        videos.append(r)
        if set_name != "sealed":
            print(f"  {v.name}: {r['found']}/{r['shown']} found, {r['spurious']} spurious, "
                  f"{r['detect_s']:.1f} s for {v.duration_s:.0f} s of video", file=sys.stderr)
        else:
            print(f"  video {len(videos)} done", file=sys.stderr)
    entry = {"set": set_name, "detector": det.label, "command": command, "git": _git(),
             "when": time.strftime("%Y-%m-%d %H:%M:%S"), "loadavg": [round(x, 2) for x in os.getloadavg()],
             "cpus": os.cpu_count(), "summary": summarise(videos), "videos": videos}
    save(entry)
    return entry


ORDER_WORDS = ("enzyme substrate binding rate constant inflation interest deposit reserve voltage current resistance "
               "entropy pressure volume orbit parallax luminosity mitosis protein gradient market supply demand price "
               "equilibrium reaction catalyst membrane neuron signal frequency wavelength energy mass momentum").split()


def order_cer(rounds: int = 6, seed: int = 11, designs: Iterable[str] | None = None) -> dict[str, float]:
    """Reading order on still slides (no video): mean ``jiwer.cer`` between what
    :func:`services.transcribe.ocr.ocr_lines` reads of a rendered slide (a bullet glyph it reads dropped)
    and the slide's text in reading order, per design, over ``rounds`` slides of each: every design of
    :data:`~evals.slide_designs.DESIGNS`, and ``two-column+table`` / ``figure+table`` (bullets beside a
    table of 3–5 rows, the table read row by row). Texts are random words of several fields
    (``seed``)."""
    import tempfile

    import jiwer

    from services.transcribe.ocr import ocr_lines

    rng = random.Random(seed)

    def phrase(n: int) -> str:
        return " ".join(rng.choice(ORDER_WORDS) for _ in range(n)).capitalize()

    out: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="lc-order-") as tmp:
        for k in range(rounds):
            for design in designs or (*DESIGNS, "two-column+table", "figure+table"):
                name, _, tabled = design.partition("+")
                table = None
                if tabled:
                    cols = rng.choice([2, 3])
                    table = [[phrase(1) for _ in range(cols)]] + [
                        [f"{rng.randint(1, 99)}.{rng.randint(0, 9)}" if j else phrase(1) for j in range(cols)]
                        for _ in range(rng.randint(3, 5))]
                size = (1920, 1080) if name == "plain-small" else (960, 540)
                image, truth = render_slide_with_text(
                    name, phrase(4), [phrase(rng.randint(4, 9)) for _ in range(rng.randint(2, 4))], size,
                    footer="Course 101" if name == "template" else "", page=3, seed=k, table=table)
                path = Path(tmp) / "slide.png"
                image.save(path)
                read = " ".join(re.sub(r"^[\u2022\u25cf\u25a0\u25aa]\s*", "", ln) for ln in ocr_lines(path))
                out.setdefault(design, []).append(jiwer.cer(" ".join(truth).lower(), read.lower()))
    return {d: round(sum(v) / len(v), 4) for d, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m evals.slides_bench", description=__doc__.split("\n")[0])
    ap.add_argument("--set", choices=["dev", "sealed", "all"], default="dev")
    ap.add_argument("--quick", action="store_true", help="two short videos (a smoke test)")
    ap.add_argument("--cost", action="store_true", help="wall time on one 5-minute 1920x1080 25 fps video")
    ap.add_argument("--module", help="load detect_slides from this file instead of services/transcribe/slides.py")
    ap.add_argument("--order", action="store_true", help="OCR reading order on still slides: CER per design, "
                    "bullets beside a table included (see order_cer)")
    args = ap.parse_args(argv)
    if args.order:
        print("| design | CER |\n|---|---|")
        print("\n".join(f"| {d} | {c} |" for d, c in order_cer().items()))
        return 0
    command = ".venv/bin/python -m evals.slides_bench " + " ".join(sys.argv[1:] if argv is None else argv)
    det = Detector(args.module)
    if args.cost:
        v = cost_video()
        path = video_file(v)
        warm_up(det)
        r = run_video(det, v)
        entry = {"set": "cost", "detector": det.label, "command": command, "git": _git(),
                 "when": time.strftime("%Y-%m-%d %H:%M:%S"), "loadavg": [round(x, 2) for x in os.getloadavg()],
                 "cpus": os.cpu_count(), "summary": {"total": aggregate([r])}, "videos": [r]}
        save(entry)
        t = entry["summary"]["total"]
        print(f"cost ({path.name}): {t['detect_s']} s for {t['video_min']} video min = {t['s_per_video_min']} s / "
              f"video min; OCR calls {t['ocr_calls']}; recall {t['recall']}, spurious {t['spurious']}")
        return 0
    sets = ["quick"] if args.quick else (list(SETS) if args.set == "all" else [args.set])
    warm_up(det)
    for s in sets:
        print(f"set {s} ({det.label})", file=sys.stderr)
        e = run_set(det, s, command)
        print("\n".join(table({s: e["summary"]["total"]}, "set")))
        if s != "sealed":
            print("\n".join(["", *table(e["summary"]["by_scenario"], "scenario"), "",
                             *table(e["summary"]["by_design"], "design"), ""]))
    print(f"written: {RESULTS / 'slides-latest.json'}, {RESULTS / 'slides.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
