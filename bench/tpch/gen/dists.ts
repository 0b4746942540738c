// TPC-H's value domains (specification v3, clause 4.2.2–4.2.3; the weights of the
// comment grammar's word lists are those of dbgen's dists.dss).

/** The 5 regions, r_regionkey = index. */
export const REGIONS = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"] as const;

/** The 25 nations, n_nationkey = index, with their n_regionkey. */
export const NATIONS: readonly (readonly [string, number])[] = [
  ["ALGERIA", 0],
  ["ARGENTINA", 1],
  ["BRAZIL", 1],
  ["CANADA", 1],
  ["EGYPT", 4],
  ["ETHIOPIA", 0],
  ["FRANCE", 3],
  ["GERMANY", 3],
  ["INDIA", 2],
  ["INDONESIA", 2],
  ["IRAN", 4],
  ["IRAQ", 4],
  ["JAPAN", 2],
  ["JORDAN", 4],
  ["KENYA", 0],
  ["MOROCCO", 0],
  ["MOZAMBIQUE", 0],
  ["PERU", 1],
  ["CHINA", 2],
  ["ROMANIA", 3],
  ["SAUDI ARABIA", 4],
  ["VIETNAM", 2],
  ["RUSSIA", 3],
  ["UNITED KINGDOM", 3],
  ["UNITED STATES", 1],
];

export const SEGMENTS = ["AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"] as const;
export const PRIORITIES = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"] as const;
export const INSTRUCTIONS = ["DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"] as const;
export const MODES = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"] as const;

const TYPE_1 = ["STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"];
const TYPE_2 = ["ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"];
const TYPE_3 = ["TIN", "NICKEL", "BRASS", "STEEL", "COPPER"];
/** p_type: the 150 combinations of the three syllable lists. */
export const TYPES: readonly string[] = TYPE_1.flatMap((a) =>
  TYPE_2.flatMap((b) => TYPE_3.map((c) => `${a} ${b} ${c}`)),
);

const CONTAINER_1 = ["SM", "LG", "MED", "JUMBO", "WRAP"];
const CONTAINER_2 = ["CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"];
/** p_container: the 40 combinations of the two syllable lists. */
export const CONTAINERS: readonly string[] = CONTAINER_1.flatMap((a) => CONTAINER_2.map((b) => `${a} ${b}`));

/** The 92 colour words p_name draws 5 distinct ones from. */
export const COLORS: readonly string[] = (
  "almond antique aquamarine azure beige bisque black blanched blue blush brown burlywood burnished " +
  "chartreuse chiffon chocolate coral cornflower cornsilk cream cyan dark deep dim dodger drab firebrick " +
  "floral forest frosted gainsboro ghost goldenrod green grey honeydew hot indian ivory khaki lace " +
  "lavender lawn lemon light lime linen magenta maroon medium metallic midnight mint misty moccasin " +
  "navajo navy olive orange orchid pale papaya peach peru pink plum powder puff purple red rose rosy " +
  "royal saddle salmon sandy seashell sienna sky slate smoke snow spring steel tan thistle tomato " +
  "turquoise violet wheat white yellow"
).split(" ");

/** A weighted word list: "word:weight word:weight" (underscores stand for spaces). */
function weighted(spec: string): string[] {
  const out: string[] = [];
  for (const item of spec.trim().split(/\s+/)) {
    const at = item.lastIndexOf(":");
    const word = item.slice(0, at).replaceAll("_", " ");
    for (let i = Number(item.slice(at + 1)); i > 0; i--) out.push(word);
  }
  return out;
}

/**
 * The comment grammar's word lists, each expanded so that a uniform pick follows the
 * weights (a word of weight 40 appears 40 times).
 */
export const WORDS = {
  nouns: weighted(`packages:40 requests:40 accounts:40 deposits:40 foxes:20 ideas:20 theodolites:20
    pinto_beans:20 instructions:20 dependencies:10 excuses:10 platelets:10 asymptotes:10 courts:5
    dolphins:5 multipliers:1 sauternes:1 warthogs:1 frets:1 dinos:1 attainments:1 somas:1 Tiresias:1
    patterns:1 forges:1 braids:1 frays:1 warhorses:1 dugouts:1 notornis:1 epitaphs:1 pearls:1
    tithes:1 waters:1 orbits:1 gifts:1 sheaves:1 depths:1 sentiments:1 decoys:1 realms:1 pains:1
    grouches:1 escapades:1 hockey_players:1`),
  verbs: weighted(`sleep:20 wake:20 are:20 cajole:20 haggle:20 nag:10 use:10 boost:10 affix:5 detect:5
    integrate:5 maintain:1 nod:1 was:1 lose:1 sublate:1 solve:1 thrash:1 promise:1 engage:1
    hinder:1 print:1 x-ray:1 breach:1 eat:1 grow:1 impress:1 mold:1 poach:1 serve:1 run:1 dazzle:1
    snooze:1 doze:1 unwind:1 kindle:1 play:1 hang:1 believe:1 doubt:1`),
  adjectives: weighted(`special:20 pending:20 unusual:20 express:20 furious:1 sly:1 careful:1 blithe:1
    quick:1 fluffy:1 slow:1 quiet:1 ruthless:1 thin:1 close:1 dogged:1 daring:1 brave:1 stealthy:1
    permanent:1 enticing:1 idle:1 busy:1 regular:50 final:40 ironic:40 even:30 bold:20 silent:10`),
  adverbs: weighted(`sometimes:1 always:1 never:1 furiously:50 slyly:50 carefully:50 blithely:40
    quickly:30 fluffily:20 slowly:1 quietly:1 ruthlessly:1 thinly:1 closely:1 doggedly:1 daringly:1
    bravely:1 stealthily:1 permanently:1 enticingly:1 idly:1 busily:1 regularly:1 finally:1
    ironically:1 evenly:1 boldly:1 silently:1`),
  prepositions: weighted(`about:50 above:50 according_to:50 across:50 after:50 against:40 along:40
    alongside_of:30 among:30 around:20 at:10 atop:1 before:1 behind:1 beneath:1 beside:1 besides:1
    between:1 beyond:1 by:1 despite:1 during:1 except:1 for:1 from:1 in_place_of:1 inside:1
    instead_of:1 into:1 near:1 of:1 on:1 outside:1 over:1 past:1 since:1 through:1 throughout:1
    to:1 toward:1 under:1 until:1 up:1 upon:1 without:1 with:1 within:1`),
  auxiliaries: weighted(`do:1 may:1 might:1 shall:1 will:1 would:1 can:1 could:1 should:1 ought_to:1
    must:1 will_have_to:1 shall_have_to:1 could_have_to:1 should_have_to:1 must_have_to:1 need_to:1
    try_to:1`),
  terminators: weighted(`.:50 ;:1 ::1 ?:1 !:1 --:1`),
  /** N noun phrase, V verb phrase, P prepositional phrase, T terminator. */
  sentences: weighted(`NVT:3 NVPT:3 NVNT:3 NPVNT:1 NPVPT:1`),
  /** N noun, J adjective, "," a comma after the adjective before, D adverb. */
  nounPhrases: weighted(`N:10 JN:20 J,JN:10 DJN:50`),
  /** V verb, X auxiliary, D adverb. */
  verbPhrases: weighted(`V:30 XV:1 VD:40 XVD:1`),
};

/** Days since 1970-01-01 of a calendar date. */
export function dayOf(y: number, m: number, d: number): number {
  return Date.UTC(y, m - 1, d) / 86_400_000;
}

export const START_DATE = dayOf(1992, 1, 1);
export const END_DATE = dayOf(1998, 12, 31);
/** The spec's CURRENTDATE: decides l_returnflag and l_linestatus. */
export const CURRENT_DATE = dayOf(1995, 6, 17);
