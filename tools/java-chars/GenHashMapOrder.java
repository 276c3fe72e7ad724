// Generates tests/fixtures/java-hashmap-order.jsonl: the iteration order of a real java.util.HashMap<String, _>
// for key lists inserted in a known order, at sizes around every table resize (12/13, 24/25, 48/49, 96/97).
// Each line: {"keys": [...insertion order...], "order": [...iteration order...]}.
//
//   java tools/java-chars/GenHashMapOrder.java > tests/fixtures/java-hashmap-order.jsonl
import java.util.*;

public class GenHashMapOrder {
    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static String list(List<String> xs) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < xs.size(); i++) {
            if (i > 0) b.append(',');
            b.append(json(xs.get(i)));
        }
        return b.append(']').toString();
    }

    public static void main(String[] args) {
        Random rnd = new Random(20261121L);
        String alphabet = "abcdefghijklmnopqrstuvwxyz0123456789\u00e4\u00f6\u00fc\u00df\u00e9\u0131\u3046\u30c6";
        int[] sizes = {1, 2, 5, 11, 12, 13, 14, 23, 24, 25, 26, 47, 48, 49, 50, 95, 96, 97, 200, 400};
        for (int size : sizes) {
            for (int round = 0; round < 3; round++) {
                LinkedHashSet<String> keys = new LinkedHashSet<>();
                while (keys.size() < size) {
                    int len = 3 + rnd.nextInt(7);
                    StringBuilder w = new StringBuilder();
                    for (int i = 0; i < len; i++) w.append(alphabet.charAt(rnd.nextInt(alphabet.length())));
                    keys.add(w.toString());
                }
                List<String> inserted = new ArrayList<>(keys);
                HashMap<String, Integer> map = new HashMap<>();
                for (String k : inserted) map.put(k, 1);
                List<String> order = new ArrayList<>(map.keySet());
                System.out.println("{\"keys\":" + list(inserted) + ",\"order\":" + list(order) + "}");
            }
        }
        // Keys that collide in the low bits (same bucket) at every size, to pin the in-bucket insertion order.
        // At most 8 per bucket: a 9th makes Java resize or treeify the bin, a documented limit we do not emulate.
        List<String> colliding = new ArrayList<>();
        for (int i = 0; colliding.size() < 30 && i < 100000; i++) {
            String k = "k" + i;
            int h = k.hashCode();
            h ^= (h >>> 16);
            if ((h & 63) == 5) colliding.add(k);
        }
        Collections.shuffle(colliding, rnd);
        for (int n : new int[] {2, 3, 7, 8}) {
            List<String> inserted = colliding.subList(0, n);
            HashMap<String, Integer> map = new HashMap<>();
            for (String k : inserted) map.put(k, 1);
            System.out.println("{\"keys\":" + list(inserted) + ",\"order\":" + list(new ArrayList<>(map.keySet())) + "}");
        }
    }
}
