/**
 * The contact list of a new campaign: a CSV file read in the browser, which column is the phone and
 * which the time zone (the rest become the calls' custom_parameters, under the names shown), and
 * the first rows as the API will read them. The API judges every row; its rejects come after.
 */
import { useState } from 'react';
import { Alert, Badge, FileInput, Group, Select, Stack, Table, Text } from '@mantine/core';
import { IconFileSpreadsheet } from '@tabler/icons-react';
import { guessMapping, mappedCsv, mappedHeader, parseCsv, previewRows, type ColumnMapping, type CsvFile } from '../../lib/contacts-csv';

const PREVIEW_ROWS = 5;

export interface ContactsChoice {
  fileName: string;
  file: CsvFile;
  mapping: ColumnMapping;
}

/** The chosen file, read, with its mapping; `csv` is what goes to the API's `contacts_csv` (null until a phone column is chosen). */
export function useContactsFile() {
  const [picked, setPicked] = useState<File | null>(null);
  const [value, setValue] = useState<ContactsChoice | null>(null);
  const [readError, setReadError] = useState<string | null>(null);
  async function onFile(file: File | null) {
    setPicked(file);
    setValue(null);
    setReadError(null);
    if (!file) return;
    try {
      const parsed = parseCsv(await file.text());
      setValue({ fileName: file.name, file: parsed, mapping: guessMapping(parsed.header) });
    } catch (err) {
      setReadError(`${file.name}: ${(err as Error).message}`);
    }
  }
  return {
    step: { picked, value, readError, onFile: (f: File | null) => void onFile(f), onMapping: (mapping: ColumnMapping) => setValue((c) => (c ? { ...c, mapping } : c)) },
    csv: value && value.mapping.phone !== null && value.file.records.length > 0 ? mappedCsv(value.file, value.mapping) : null,
  };
}

export function ContactsStep(props: { picked: File | null; value: ContactsChoice | null; readError: string | null; onFile(file: File | null): void; onMapping(mapping: ColumnMapping): void; error?: string }) {
  const { value } = props;
  return (
    <Stack gap="sm" role="group" aria-label="Contacts">
      <FileInput
        label="Contacts (CSV)"
        description="A header line, one contact per line: a phone column, optionally a time-zone column; every other column becomes a call parameter."
        placeholder="Choose a CSV file"
        accept=".csv,text/csv"
        required
        leftSection={<IconFileSpreadsheet size={16} />}
        value={props.picked}
        error={props.readError ?? props.error}
        onChange={props.onFile}
      />
      {value && <Mapping choice={value} onMapping={props.onMapping} />}
    </Stack>
  );
}

function Mapping({ choice, onMapping }: { choice: ContactsChoice; onMapping(mapping: ColumnMapping): void }) {
  const { file, mapping } = choice;
  const columns = file.header.map((h, i) => ({ value: String(i), label: h || `column ${i + 1}` }));
  const names = mappedHeader(file.header, mapping);
  const params = names.flatMap((n, i) => (i === mapping.phone || i === mapping.timezone ? [] : [{ from: file.header[i], to: n }]));
  const rows = previewRows(file, mapping, PREVIEW_ROWS);
  return (
    <>
      <Text size="sm">
        <b>{choice.fileName}</b>: {file.records.length} rows
      </Text>
      <Group grow align="flex-start">
        <Select label="Phone column" required data={columns} value={mapping.phone === null ? null : String(mapping.phone)} onChange={(v) => onMapping({ ...mapping, phone: v === null ? null : Number(v), timezone: mapping.timezone === Number(v) ? null : mapping.timezone })} />
        <Select
          label="Time-zone column"
          description="None: the campaign's time zone for everyone"
          clearable
          placeholder="None"
          data={columns.filter((c) => c.value !== String(mapping.phone))}
          value={mapping.timezone === null ? null : String(mapping.timezone)}
          onChange={(v) => onMapping({ ...mapping, timezone: v === null ? null : Number(v) })}
        />
      </Group>
      {mapping.phone === null && <Alert color="orange">Choose the column that holds the phone numbers.</Alert>}
      {file.records.length === 0 && <Alert color="orange">The file has a header line but no contacts.</Alert>}
      <Group gap={6} role="group" aria-label="Call parameters">
        <Text size="sm">Call parameters:</Text>
        {params.length === 0 && <Text size="sm" c="dimmed">none</Text>}
        {params.map((p) => (
          <Badge key={p.to} variant="light" tt="none">
            {p.from === p.to ? p.to : `${p.from} → ${p.to}`}
          </Badge>
        ))}
      </Group>
      <Table.ScrollContainer minWidth={480}>
        <Table aria-label="Contacts preview" withTableBorder>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Line</Table.Th>
              <Table.Th>Phone</Table.Th>
              <Table.Th>Time zone</Table.Th>
              <Table.Th>Parameters</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((r) => (
              <Table.Tr key={r.line}>
                <Table.Td>{r.line}</Table.Td>
                <Table.Td>
                  {r.phone || '—'}
                  {r.problem && (
                    <Text size="xs" c="red">
                      {r.problem}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>{r.timezone || <Text span c="dimmed" size="sm">campaign's</Text>}</Table.Td>
                <Table.Td>
                  <Text size="xs">{r.parameters.map(([k, v]) => `${k}=${v}`).join(', ') || '—'}</Text>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {file.records.length > PREVIEW_ROWS && (
        <Text size="xs" c="dimmed">
          The first {PREVIEW_ROWS} of {file.records.length} rows. The API checks every row when the campaign is created and lists the ones it rejects with their line.
        </Text>
      )}
    </>
  );
}
