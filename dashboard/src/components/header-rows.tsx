/** The rows of a headers table: one per header, its name and value in monospace, in the order given. */
export function HeaderRows({ headers }: { headers: [string, string][] }) {
  return (
    <>
      {headers.map(([name, value]) => (
        <tr key={name}>
          <th scope="row" class="mono">
            {name}
          </th>
          <td class="mono">{value}</td>
        </tr>
      ))}
    </>
  );
}
